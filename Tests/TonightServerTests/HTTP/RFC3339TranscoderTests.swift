import Foundation
import OpenAPIRuntime
import Testing

@testable import TonightServer

@Suite("Dates in answers")
struct RFC3339TranscoderTests {
    @Test("the fast transcoder writes what the runtime's ISO 8601 transcoder writes")
    func sameAsStandard() throws {
        let fast = RFC3339Transcoder()
        let standard = ISO8601DateTranscoder()
        var instants: [Double] = [
            0, -1.5, 0.9999999, 1_700_000_000.999, 951_782_400, 4_107_542_400, 253_402_300_799, -12_212_553_600,
            -62_135_596_800, 1e15, -1e15,
            // Half a millisecond before a second, before 1970: the formatter keeps the second
            // (found by the random sweep below in a CI-like run, 2026-11-26).
            -5_524_835_069.0005, -1.0005,
        ]
        for _ in 0..<5000 { instants.append(Double.random(in: -13_000_000_000...260_000_000_000)) }
        for _ in 0..<5000 { instants.append(Double.random(in: 1_500_000_000...2_000_000_000)) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(try fast.encode(date) == standard.encode(date), "\(seconds)")
        }
        #expect(try fast.decode("2026-11-23T21:30:00Z") == Date(timeIntervalSince1970: 1_795_469_400))
    }
}
