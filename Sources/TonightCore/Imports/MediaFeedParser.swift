import Foundation

/// One media enclosure of a venue's RSS or Atom feed.
public struct MediaFeedItem: Sendable, Equatable {
    /// The item's stable id: RSS `guid`, Atom `id`, else the enclosure URL.
    public var id: String
    /// The item's title (becomes the post's caption).
    public var title: String
    /// Where the media is: an http(s) URL, a `file:` URL or a path relative to the feed file.
    public var url: String
    /// The declared MIME type, if any (only a hint: the bytes decide).
    public var type: String?
    /// When the item was published, if the feed says (RFC 822 or RFC 3339).
    public var published: Date?

    /// An item.
    public init(id: String, title: String, url: String, type: String?, published: Date?) {
        self.id = id
        self.title = title
        self.url = url
        self.type = type
        self.published = published
    }
}

/// Reads the video and image enclosures of an RSS 2.0 feed (`<item>` with `<enclosure>` or
/// `<media:content>`) or an Atom feed (`<entry>` with `<link rel="enclosure">`), streaming, with
/// the import parser's protection against hostile XML. Items without a video or image enclosure
/// are skipped; an item with several contributes each, its id suffixed `#2`, `#3`… (an item
/// without an id is known by each enclosure's URL).
public struct MediaFeedParser: Sendable {
    private let source: XMLSource

    /// A parser over a file.
    public init(path: String) { source = XMLSource(path: path, chunkSize: XMLPullParser.defaultChunkSize) }
    /// A parser over bytes in memory.
    public init(bytes: [UInt8]) { source = XMLSource(bytes: bytes, chunkSize: XMLPullParser.defaultChunkSize) }

    /// The feed's title and its media items, in document order.
    public func parse() throws -> (title: String?, items: [MediaFeedItem]) {
        let xml = try source.open()
        let item = xml.name("item"), entry = xml.name("entry"), title = xml.name("title"), guid = xml.name("guid")
        let id = xml.name("id"), enclosure = xml.name("enclosure"), mediaContent = xml.name("media:content")
        let link = xml.name("link"), pubDate = xml.name("pubDate"), published = xml.name("published")
        let updated = xml.name("updated")
        var feedTitle: String?
        var items: [MediaFeedItem] = []
        var inItem = false
        var current: (id: String?, title: String, date: Date?, media: [(url: String, type: String?)]) = (
            nil, "", nil, []
        )
        var textTarget: XMLName?
        var text = ""
        while true {
            switch try xml.next() {
            case .startElement(let name):
                if name == item || name == entry {
                    inItem = true
                    current = (nil, "", nil, [])
                } else if inItem && (name == enclosure || name == mediaContent) {
                    if let url = xml.attribute(xml.name("url")) {
                        current.media.append((url, xml.attribute(xml.name("type"))))
                    }
                } else if inItem && name == link, xml.attribute(xml.name("rel")) == "enclosure",
                    let href = xml.attribute(xml.name("href"))
                {
                    current.media.append((href, xml.attribute(xml.name("type"))))
                } else if name == title || (inItem && [guid, id, pubDate, published, updated].contains(name)) {
                    textTarget = name
                    text = ""
                }
            case .text:
                if textTarget != nil { text += xml.text }
            case .endElement(let name):
                if name == textTarget {
                    let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !inItem, name == title, feedTitle == nil {
                        feedTitle = value
                    } else if inItem {
                        if name == title { current.title = value }
                        if name == guid || name == id { current.id = value }
                        if name == pubDate { current.date = Self.rfc822(value) ?? current.date }
                        if name == published || (name == updated && current.date == nil) {
                            current.date = Self.rfc3339(value) ?? current.date
                        }
                    }
                    textTarget = nil
                } else if name == item || name == entry {
                    inItem = false
                    let media = current.media.filter { Self.isMedia($0.url, $0.type) }
                    for (index, enclosure) in media.enumerated() {
                        // The item's id (suffixed after the first), or the enclosure's own URL.
                        let id = current.id.flatMap { $0.isEmpty ? nil : (index == 0 ? $0 : "\($0)#\(index + 1)") }
                        items.append(
                            MediaFeedItem(
                                id: id ?? enclosure.url, title: current.title,
                                url: enclosure.url, type: enclosure.type, published: current.date))
                    }
                }
            case .endOfDocument:
                return (feedTitle, items)
            }
        }
    }

    /// Whether an enclosure is a video or an image: by its declared type, else by its extension.
    static func isMedia(_ url: String, _ type: String?) -> Bool {
        if let type, !type.isEmpty { return type.hasPrefix("video/") || type.hasPrefix("image/") }
        let path = url.split(separator: "?").first.map(String.init) ?? url
        let ext = (path as NSString).pathExtension.lowercased()
        return ["mp4", "m4v", "mov", "webm", "jpg", "jpeg", "png", "heic"].contains(ext)
    }

    static func rfc822(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["EEE, dd MMM yyyy HH:mm:ss Z", "dd MMM yyyy HH:mm:ss Z", "EEE, dd MMM yyyy HH:mm Z"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    static func rfc3339(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
