import Foundation
import Testing
import TonightCore

@Suite("Identifier")
struct IdentifierTests {
    @Test("ids are UUIDv7 text: the time first, version 7, the RFC variant, random otherwise")
    func uuidVersion7() throws {
        let now = Date(timeIntervalSince1970: 1_764_288_000.123)
        let ids = (0..<1000).map { _ in Identifier.make(now: now) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let uuid = try #require(UUID(uuidString: id))
            #expect(uuid.uuidString.lowercased() == id)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
            let millis = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(millis == 1_764_288_000_123)
        }
        // Later ids sort after earlier ones.
        #expect(Identifier.make(now: now) < Identifier.make(now: now.addingTimeInterval(0.002)))
    }
}
