import Foundation
import Testing
import TonightCore

/// Reads a whole document into a readable trace: `<a x=1>`, `"text"`, `</a>`, `!unknown entity &x;`.
private func trace(_ xml: String, chunkSize: Int = XMLPullParser.defaultChunkSize) throws -> [String] {
    try trace(Array(xml.utf8), chunkSize: chunkSize)
}

private func trace(_ bytes: [UInt8], chunkSize: Int = XMLPullParser.defaultChunkSize) throws -> [String] {
    let parser = XMLPullParser(bytes: bytes, chunkSize: chunkSize)
    var out: [String] = []
    while true {
        let event = try parser.next()
        switch event {
        case .startElement(let name):
            let attributes = (0..<parser.attributeCount).map { k in
                let (name, value) = parser.attribute(at: k)
                return " \(parser.string(for: name))=\(value)"
            }
            out.append("<\(parser.string(for: name))\(attributes.joined())>")
        case .endElement(let name):
            out.append("</\(parser.string(for: name))>")
        case .text:
            out.append("\"\(parser.text)\"")
        case .endOfDocument:
            return out
        }
        if let error = parser.referenceError { out.append("!\(error)") }
    }
}

private func expectMalformed(_ xml: String, _ reasonPart: String, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        _ = try trace(xml)
        Issue.record("accepted: \(xml)", sourceLocation: sourceLocation)
    } catch ImportError.malformed(let position, let reason) {
        #expect(position.hasPrefix("line "), sourceLocation: sourceLocation)
        #expect(reason.contains(reasonPart), "\(reason)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
    }
}

private func expectHostile(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let start = ContinuousClock.now
    do {
        _ = try trace(xml)
        Issue.record("accepted a hostile document", sourceLocation: sourceLocation)
    } catch ImportError.hostile {
    } catch {
        Issue.record("expected .hostile, got \(error)", sourceLocation: sourceLocation)
    }
    #expect(ContinuousClock.now - start < .seconds(1), sourceLocation: sourceLocation)
}

@Suite("XML pull parser")
struct XMLPullParserTests {
    @Test("elements, attributes, empty elements and text in order")
    func basics() throws {
        let events = try trace(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x='1' y=\"two words\"><b/>hi<c>there</c></a>\n")
        #expect(events == ["<a x=1 y=two words>", "<b>", "</b>", "\"hi\"", "<c>", "\"there\"", "</c>", "</a>"])
    }

    @Test("predefined entities, numeric references, CDATA; comments and PIs left out")
    func decoding() throws {
        let events = try trace(
            "<a t=\"&lt;&amp;&quot;&#65;\">&lt;x&gt; &amp; &apos;&quot; &#233;&#xE9;&#x1F600; "
                + "<![CDATA[<raw> & ]] stuff]]><!-- note -->tail<?pi data?></a>")
        #expect(events == ["<a t=<&\"A>", "\"<x> & '\" éé😀 <raw> & ]] stufftail\"", "</a>"])
    }

    @Test("a UTF-8 byte order mark is skipped; UTF-16 is refused")
    func byteOrderMark() throws {
        #expect(try trace([0xEF, 0xBB, 0xBF] + Array("<a/>".utf8), chunkSize: 1) == ["<a>", "</a>"])
        #expect(throws: ImportError.self) { try trace([0xFF, 0xFE, 0x3C, 0x00, 0x61, 0x00, 0x2F, 0x00, 0x3E, 0x00]) }
    }

    @Test("line ends: CRLF and CR become LF; attribute whitespace becomes spaces")
    func lineEnds() throws {
        #expect(try trace("<a v=\"1\r\n2\t3\">x\r\ny\rz</a>") == ["<a v=1 2 3>", "\"x\ny\nz\"", "</a>"])
    }

    @Test("unknown entities are never expanded: reported with that text or tag")
    func unknownEntity() throws {
        #expect(try trace("<a>x&xxe;y</a>") == ["<a>", "\"xy\"", "!unknown entity &xxe;", "</a>"])
        #expect(try trace("<a><b v='&nbsp;'/></a>") == ["<a>", "<b v=>", "!unknown entity &nbsp;", "</b>", "</a>"])
    }

    @Test("line numbers of events and errors")
    func lines() throws {
        let parser = XMLPullParser(bytes: Array("<a>\n<b>\n\n<c/></b>\n</a>".utf8))
        var lines: [String: Int] = [:]
        while case let event = try parser.next(), event != .endOfDocument {
            if case .startElement(let name) = event { lines[parser.string(for: name)] = parser.eventLine }
        }
        #expect(lines == ["a": 1, "b": 2, "c": 4])
        #expect(throws: ImportError.malformed(position: "line 3", reason: "</c> does not close <b>")) {
            try trace("<a>\n<b>\n</c></a>")
        }
    }

    @Test("tokens split across chunk boundaries parse the same", arguments: [1, 2, 3, 7, 64])
    func chunkBoundaries(chunkSize: Int) throws {
        let xml =
            "<?xml version='1.0'?><!-- c --><feed a=\"x&amp;y\"><name>Sigur Rós &#x1F600; &lt;</name>"
            + "<e><![CDATA[a]]b]]></e><long_element_name_here with_attribute='Ünïcödé'/>\r\n</feed>"
        #expect(try trace(xml, chunkSize: chunkSize) == trace(xml))
        #expect(try trace(xml, chunkSize: chunkSize).count == 11)
    }

    @Test("reading from a file, in small chunks")
    func file() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("xml-\(UUID().uuidString).xml")
        defer { try? FileManager.default.removeItem(at: url) }
        let xml = "<r>" + String(repeating: "<item id=\"1\">t&amp;x</item>", count: 500) + "</r>"
        try Data(xml.utf8).write(to: url)
        let parser = try XMLPullParser(path: url.path, chunkSize: 5)
        var starts = 0, texts = 0
        while case let event = try parser.next(), event != .endOfDocument {
            if case .startElement = event { starts += 1 }
            if case .text = event {
                #expect(parser.text == "t&x")
                texts += 1
            }
        }
        #expect(starts == 501 && texts == 500)
        #expect(throws: ImportError.self) { try XMLPullParser(path: "/nonexistent/feed.xml") }
    }

    @Test("hostile documents are refused before anything is read")
    func hostile() {
        // Billion laughs.
        expectHostile(
            """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
            <lolz>&lol3;</lolz>
            """)
        // Quadratic blowup: one big entity referenced many times.
        let big = String(repeating: "x", count: 100_000)
        expectHostile(
            "<!DOCTYPE r [<!ENTITY a \"\(big)\">]><r>" + String(repeating: "&a;", count: 10_000) + "</r>")
        // External entity and DTD retrieval.
        expectHostile("<!DOCTYPE r [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><r>&xxe;</r>")
        expectHostile("<!DOCTYPE r SYSTEM \"http://example.com/evil.dtd\"><r/>")
        // Parameter entities.
        expectHostile("<!DOCTYPE r [<!ENTITY % p SYSTEM \"http://example.com/p.dtd\"> %p;]><r/>")
        // Declarations anywhere else too.
        expectHostile("<r><!ENTITY a \"b\"></r>")
        expectHostile("<r><!ELEMENT r ANY></r>")
    }

    @Test("malformed documents")
    func malformed() {
        expectMalformed("<a><b></a>", "does not close")
        expectMalformed("<a>", "not closed")
        expectMalformed("<a></a><b></b>", "second root")
        expectMalformed("", "no root")
        expectMalformed("text<a/>", "outside the root")
        expectMalformed("<a/>tail", "outside the root")
        expectMalformed("<a x='1' x='2'/>", "duplicate attribute")
        expectMalformed("<a x=1/>", "quoted")
        expectMalformed("<a x='1'y='2'/>", "whitespace")
        expectMalformed("<a>&#0;</a>", "illegal character")
        expectMalformed("<a>&#xD800;</a>", "illegal character")
        expectMalformed("<a>AT&T</a>", "reference")
        expectMalformed("<a>& b</a>", "reference")
        expectMalformed("<a><!-- x -- y --></a>", "'--'")
        expectMalformed("<a>\u{1}</a>", "control character")
        expectMalformed("<1a/>", "unexpected")
        expectMalformed("<a v='<'/>", "'<'")
        expectMalformed("<![CDATA[x]]><a/>", "CDATA")
        expectMalformed("<?xml version='1.0' encoding='ISO-8859-1'?><a/>", "encoding")
        expectMalformed("<a><!-- unterminated </a>", "end of file")
    }

    @Test(
        "bytes that are not UTF-8 are refused",
        arguments: [
            [0xC3, 0x28], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF],
        ] as [[UInt8]])
    func badUTF8(_ bad: [UInt8]) {
        for document in [Array("<a>x".utf8) + bad + Array("</a>".utf8), Array("<a v='".utf8) + bad + Array("'/>".utf8)]
        {
            #expect(throws: ImportError.malformed(position: "line 1", reason: "invalid UTF-8")) {
                try trace(document, chunkSize: 2)
            }
        }
        #expect(throws: ImportError.self) { try trace(Array("<a".utf8) + bad + Array("/>".utf8)) }
    }

    @Test("limits: text size, depth, attributes, name length")
    func limits() {
        var limits = XMLPullParser.Limits()
        limits.maxTextBytes = 100
        limits.maxDepth = 5
        limits.maxAttributes = 3
        limits.maxNameBytes = 10
        func parse(_ xml: String) throws {
            let parser = XMLPullParser(bytes: Array(xml.utf8), chunkSize: 16, limits: limits)
            while try parser.next() != .endOfDocument {}
        }
        #expect(throws: Never.self) { try parse("<a>" + String(repeating: "x", count: 100) + "</a>") }
        #expect(throws: ImportError.self) { try parse("<a>" + String(repeating: "x", count: 101) + "</a>") }
        #expect(throws: ImportError.self) { try parse("<a><![CDATA[" + String(repeating: "x", count: 101) + "]]></a>") }
        #expect(throws: Never.self) { try parse("<a><a><a><a><a/></a></a></a></a>") }
        #expect(throws: ImportError.self) { try parse("<a><a><a><a><a><a/></a></a></a></a></a>") }
        #expect(throws: ImportError.self) { try parse("<a b='1' c='2' d='3' e='4'/>") }
        #expect(throws: ImportError.self) { try parse("<abcdefghijk/>") }
        #expect(throws: ImportError.self) { try parse(String(repeating: "<a>", count: 10_000)) }
    }

    @Test("interned names compare as integers")
    func names() throws {
        let parser = XMLPullParser(bytes: Array("<feed><event/></feed>".utf8))
        let feed = parser.name("feed"), event = parser.name("event")
        #expect(parser.name("feed") == feed)
        #expect(try parser.next() == .startElement(feed))
        #expect(try parser.next() == .startElement(event))
        #expect(try parser.next() == .endElement(event))
        #expect(try parser.next() == .endElement(feed))
        #expect(try parser.next() == .endOfDocument)
        #expect(try parser.next() == .endOfDocument)
    }
}
