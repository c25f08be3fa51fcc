import Testing

@testable import TonightCore

@Suite("Place grid")
struct PlaceGridTests {
    @Test("the next circle of a nearest-first search is sized by the density the last one found")
    func widened() {
        #expect(PlaceGrid.widened(300, found: 0, wanted: 21) == 1200)
        // Nearly enough: at least one and a half times the radius.
        #expect(PlaceGrid.widened(300, found: 20, wanted: 21) == 450)
        // Few found: a circle that should hold half as many again as wanted at the same density.
        for found in 1...13 {
            let radius = PlaceGrid.widened(300, found: found, wanted: 21)
            let expected = Double(found) * (radius / 300) * (radius / 300)
            #expect(abs(expected - 31.5) < 1e-9, "found \(found): \(radius) m")
        }
    }
}
