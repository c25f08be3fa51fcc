import Foundation
import Testing

@testable import TonightCore

@Suite("Venue media feeds (RSS and Atom)")
struct MediaFeedParserTests {
    @Test("RSS: enclosures and media:content of video and image types, ids from guids")
    func rss() throws {
        let xml = """
            <?xml version="1.0"?>
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>The Dome</title>
            <item><title>Friday #salsa</title><guid>post-1</guid><pubDate>Fri, 20 Nov 2026 22:00:00 +0000</pubDate>
              <enclosure url="clips/one.mp4" type="video/mp4" length="100"/></item>
            <item><title>Podcast</title><guid>post-2</guid><enclosure url="talk.mp3" type="audio/mpeg"/></item>
            <item><title>Two photos</title><media:content url="https://example.com/a.jpg" type="image/jpeg"/>
              <media:content url="https://example.com/b.png"/></item>
            </channel></rss>
            """
        let (title, items) = try MediaFeedParser(bytes: Array(xml.utf8)).parse()
        #expect(title == "The Dome")
        #expect(items.map(\.id) == ["post-1", "https://example.com/a.jpg", "https://example.com/b.png"])
        #expect(items.map(\.url) == ["clips/one.mp4", "https://example.com/a.jpg", "https://example.com/b.png"])
        #expect(items[0].title == "Friday #salsa")
        #expect(items[0].published == Date(timeIntervalSince1970: 1_795_212_000))
    }

    @Test("Atom: link rel=enclosure, ids from entry ids")
    func atom() throws {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Club</title>
            <entry><id>tag:club,2026:1</id><title>Doors</title><published>2026-11-20T21:00:00Z</published>
              <link rel="alternate" href="https://club.example/1"/>
              <link rel="enclosure" href="file:///tmp/x.webm" type="video/webm"/></entry>
            <entry><id>tag:club,2026:2</id><title>Text only</title></entry>
            </feed>
            """
        let (title, items) = try MediaFeedParser(bytes: Array(xml.utf8)).parse()
        #expect(title == "Club")
        #expect(items.count == 1)
        #expect(items.first?.id == "tag:club,2026:1" && items.first?.url == "file:///tmp/x.webm")
        #expect(items.first?.published == Date(timeIntervalSince1970: 1_795_208_400))
    }

    @Test("a feed with a DTD is refused")
    func hostile() {
        let xml = "<!DOCTYPE rss [<!ENTITY x \"y\">]><rss><channel><title>&x;</title></channel></rss>"
        #expect(throws: ImportError.self) { try MediaFeedParser(bytes: Array(xml.utf8)).parse() }
    }
}
