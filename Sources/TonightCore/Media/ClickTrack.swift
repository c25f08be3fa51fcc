import Foundation

/// Synthetic metronome audio, used to test and benchmark ``TempoEstimator``.
public enum ClickTrack {
    /// Duration of one click burst, in seconds.
    public static let clickDuration = 0.03
    /// Exponential decay time constant of a click, in seconds.
    public static let clickDecay = 0.006

    /// Mono Float samples of a metronome: a short exponentially decaying sine burst starting
    /// exactly at each beat time `k * 60 / bpm` (k = 0, 1, …, while inside `seconds`).
    ///
    /// - Every `accentEvery`-th beat (starting with the first) is an accent: a 1.5 kHz burst at
    ///   amplitude 1.0; the others are 1 kHz at amplitude 0.8. `accentEvery <= 0` disables accents.
    /// - `noise > 0` adds white noise, uniform in `-noise…noise`, from a fixed-seed SplitMix64
    ///   generator, so the output is identical on every call and platform.
    /// - The result is clamped to -1…1. Invalid arguments (non-positive or non-finite `bpm`,
    ///   `seconds` or `sampleRate`) give an empty array.
    public static func clicks(bpm: Double, seconds: Double, sampleRate: Int, accentEvery: Int = 4, noise: Float = 0)
        -> [Float]
    {
        guard bpm.isFinite, bpm > 0, seconds.isFinite, seconds > 0, sampleRate > 0 else { return [] }
        let sr = Double(sampleRate)
        let count = Int((seconds * sr).rounded(.down))
        guard count > 0 else { return [] }
        var out = [Float](repeating: 0, count: count)

        let burstLength = max(1, Int((clickDuration * sr).rounded()))
        let period = 60.0 / bpm
        var k = 0
        while true {
            let start = Int((Double(k) * period * sr).rounded())
            if start >= count { break }
            let accent = accentEvery > 0 && k % accentEvery == 0
            let freq = accent ? 1500.0 : 1000.0
            let amp = accent ? 1.0 : 0.8
            for n in 0..<min(burstLength, count - start) {
                let t = Double(n) / sr
                out[start + n] += Float(amp * exp(-t / clickDecay) * sin(2 * Double.pi * freq * t))
            }
            k += 1
        }

        if noise > 0 {
            var rng = SplitMix64(seed: 0x5EED_C11C_0000_0001)
            for i in 0..<count {
                // Uniform in [-1, 1) from the top 24 bits.
                let u = Float(rng.next() >> 40) / Float(1 << 23) - 1
                out[i] += noise * u
            }
        }
        for i in 0..<count { out[i] = min(1, max(-1, out[i])) }
        return out
    }
}

/// Small deterministic PRNG (SplitMix64): reproducible noise here, and reproducible random cases
/// in tests (a failing case fails again).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
