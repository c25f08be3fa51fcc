// One file on purpose (~520 lines): one signal-processing pipeline (onsets, autocorrelation,
// beat tracking) whose stages share their tuning constants.
import Foundation

/// A global tempo and the beat grid found in a clip.
public struct TempoEstimate: Sendable, Equatable {
    /// Beats per minute, within ``TempoEstimator/minBPM``…``TempoEstimator/maxBPM``.
    public var bpm: Double
    /// Beat times in seconds from the start of the clip, ascending.
    public var beats: [Double]
    /// 0…1: how much the winning periodicity stands out from the rest of the tempo range
    /// (`1 - mean / peak` of the onset autocorrelation over 60…200 BPM). Click tracks give ≳ 0.8,
    /// steady noise or arrhythmic material ≲ 0.3.
    public var confidence: Double

    public init(bpm: Double, beats: [Double], confidence: Double) {
        self.bpm = bpm
        self.beats = beats
        self.confidence = confidence
    }
}

/// Classic, explainable tempo and beat estimation from mono PCM (no machine learning).
///
/// The pipeline:
///
/// 1. **Framing.** The signal is cut into frames of `n` samples (the power of two nearest to
///    46 ms: 1024 at 22.05 kHz, 2048 at 44.1/48 kHz) with a hop of `n / 2`, i.e. an
///    onset-envelope rate of about 43 frames per second. Frame `i` is centred on sample
///    `i * hop`; the signal is taken as zero outside the clip. The window is a Tukey window
///    (α = ½, flat over the central half) rather than Hann: with a half-frame hop every instant
///    lies in the flat top of some frame, so a short hit produces the same total flux whatever
///    its position relative to the frame grid. (With Hann, hits midway between frame centres
///    score lower; for tempos whose period is a half-integer number of frames this made every
///    other beat weaker and pushed the estimate an octave down under noise.)
/// 2. **Onset strength (spectral flux).** Each frame's magnitude spectrum comes from a small
///    radix-2 Cooley–Tukey FFT (a real FFT computed as a half-size complex FFT plus a split
///    step). Magnitudes, scaled so a full-scale sinusoid is ≈ 1, are compressed with
///    `log(1 + 10·|X|)`, and the flux of frame `i` is the sum over bins (DC excluded) of the
///    *increase* since frame `i-1` (half-wave rectified difference), so onsets and hits score
///    and decays do not. Frame 0 has no predecessor and scores 0, so a clip cut into running
///    audio does not begin with a spurious onset.
/// 3. **Detrending.** A centred moving mean over ±0.25 s is subtracted, the result is
///    half-wave rectified again and divided by its standard deviation. What is left is a
///    sparse "novelty" envelope that peaks at onsets.
/// 4. **Periodicity.** The envelope is lightly smoothed (Gaussian, σ = 1 frame, so a period
///    that falls between two integer lags still gives one clear peak), mean-removed and
///    autocorrelated. Lags corresponding to 60…200 BPM are candidates; each positive local
///    maximum is weighted by a mild log-normal prior centred on 120 BPM (σ = one octave),
///    which settles most octave ambiguity (64 vs 128 BPM, 70 vs 140 BPM). The best lag is
///    refined by parabolic interpolation.
/// 5. **Octave check.** A strictly periodic pulse gives (almost) equal autocorrelation peaks
///    at its period and at every multiple. If the peak at *half* the chosen period (still
///    within 200 BPM) reaches at least 90 % of the chosen peak, the faster pulse is taken as
///    the beat, and the check repeats. The prior only decides when the evidence does not:
///    without this step a 174 BPM click track reads as 87 BPM. The flip side: music with
///    off-beat hits (e.g. steady eighth-note hi-hats) as strong as its beats is reported at
///    double tempo when that is ≤ 200 BPM.
/// 6. **Refinement with harmonics.** Peaks near 2, 3, … 8 times the period (those at least
///    half as high as the chosen peak) are located and parabolically interpolated, and the
///    period is fitted by least squares through all of them (`lag_k ≈ k · period`). This
///    shrinks the lag quantisation error by up to 8×.
/// 7. **Beat placement by dynamic programming** (Ellis 2007): each frame's score is its
///    onset strength plus the best score of a predecessor 0.5…2 periods earlier, penalised by
///    `100 · log(interval / period)²` (a chain restarts when every predecessor would lower
///    the score). Backtracking from the best-scoring frame in the last period gives a beat
///    sequence that follows onsets yet keeps the tempo. Beats at either end whose onset is
///    below 10 % of the median beat onset are trimmed, and each beat is refined to a
///    fraction of a frame by parabolic interpolation of the envelope. A frame index `f` is
///    the time `f · hop / sampleRate` (the frame's centre).
///
/// Confidence is `1 - mean / peak` of the (uncentred) autocorrelation: `peak` at the chosen
/// period, `mean` over all lags for 60…200 BPM; clamped to 0…1.
///
/// Cost is one FFT per hop (≈ 23 ms) plus an autocorrelation over ≤ 8 beat periods of lag
/// and the DP, all linear in the clip length.
public enum TempoEstimator {
    public static let minBPM = 60.0
    public static let maxBPM = 200.0
    /// Clips shorter than this many seconds give `nil`.
    public static let minimumDuration = 4.0
    /// A clip whose absolute peak is below this (≈ −80 dBFS) is treated as silence.
    public static let silenceThreshold: Float = 1e-4

    /// `samples` mono Float in -1…1 at `sampleRate` (e.g. 22050 as produced by `ffmpeg -ac 1 -ar 22050 -f f32le`). Tempo searched in 60…200 BPM. nil for silence or clips shorter than 4 s.
    ///
    /// Also `nil` when `sampleRate` is not positive or the clip has no onsets at all (e.g. a
    /// constant tone). Non-finite samples are treated as 0. See the type documentation for
    /// the method.
    public static func estimate(samples: [Float], sampleRate: Int) -> TempoEstimate? {
        guard sampleRate > 0 else { return nil }
        let duration = Double(samples.count) / Double(sampleRate)
        guard duration >= minimumDuration else { return nil }
        var peak: Float = 0
        for s in samples where s.isFinite { peak = max(peak, abs(s)) }
        guard peak >= silenceThreshold else { return nil }

        let env = onsetEnvelope(samples: samples, sampleRate: sampleRate)
        guard let onset = normalizedNovelty(env.flux, frameRate: env.frameRate) else { return nil }
        let fr = env.frameRate
        guard let period = estimatePeriod(onset: onset, frameRate: fr) else { return nil }

        let bpm = min(maxBPM, max(minBPM, 60 * fr / period.lag))
        let frames = trackBeats(onset: onset, period: 60 * fr / bpm)
        let beats = frames.map { min(duration, max(0, $0 / fr)) }
        return TempoEstimate(bpm: bpm, beats: beats, confidence: period.confidence)
    }

    // MARK: - 1–2. Framing and spectral flux

    /// FFT size for a sample rate: the power of two nearest to 46 ms, within 256…8192.
    static func frameSize(sampleRate: Int) -> Int {
        let target = Double(sampleRate) * 0.0464
        let exponent = max(8, min(13, Int(log2(max(target, 1)).rounded())))
        return 1 << exponent
    }

    /// Magnitude compression factor γ in `log(1 + γ·|X|)`, with `|X|` scaled so a full-scale
    /// sinusoid has magnitude ≈ 1.
    static let compression: Float = 10
    /// σ, in frames, of the Gaussian smoothing applied to the envelope before autocorrelation.
    static let acfSmoothing = 1.0
    /// How strong (relative to the chosen peak) the half-period peak must be to double the tempo.
    static let octaveRatio = 0.9

    /// Tukey window with α = ½: raised-cosine tapers over the outer quarter on each side and a
    /// flat top over the central half. With a hop of half the frame, any instant lies in the
    /// flat top of some frame, so a short hit yields the same total flux whatever its position
    /// relative to the frame grid (a Hann window would halve it between two frame centres,
    /// making onset strength depend on sub-frame phase and biasing the periodicity analysis).
    static func tukeyWindow(_ n: Int) -> [Float] {
        let taper = n / 4
        return (0..<n).map { j in
            let d = min(j, n - 1 - j)
            return d >= taper ? 1 : Float(0.5 - 0.5 * cos(Double.pi * Double(d) / Double(taper)))
        }
    }

    /// Spectral-flux onset strength, one value per hop (frame `i` centred on sample `i * hop`).
    static func onsetEnvelope(samples: [Float], sampleRate: Int) -> (flux: [Float], frameRate: Double, hop: Int) {
        let n = frameSize(sampleRate: sampleRate)
        let hop = n / 2
        let bins = n / 2 + 1
        let frameCount = samples.count / hop + 1
        let fft = RealFFT(size: n)
        let window = tukeyWindow(n)
        let scale = compression * 2 / window.reduce(0, +)  // a sinusoid's magnitude is Σw/2

        var flux = [Float](repeating: 0, count: frameCount)
        var frame = [Float](repeating: 0, count: n)
        var mags = [Float](repeating: 0, count: bins)
        var previous = [Float](repeating: 0, count: bins)
        var scratch = FFTScratch(size: n)

        samples.withUnsafeBufferPointer { x in
            window.withUnsafeBufferPointer { w in
                frame.withUnsafeMutableBufferPointer { f in
                    mags.withUnsafeMutableBufferPointer { m in
                        previous.withUnsafeMutableBufferPointer { prev in
                            flux.withUnsafeMutableBufferPointer { out in
                                let total = x.count
                                for i in 0..<frameCount {
                                    let start = i * hop - n / 2
                                    for j in 0..<n {
                                        let s = start + j
                                        var v: Float = 0
                                        if s >= 0 && s < total {
                                            v = x[s]
                                            if !v.isFinite { v = 0 }
                                        }
                                        f[j] = v * w[j]
                                    }
                                    fft.magnitudes(f, into: m, scratch: &scratch)
                                    var sum: Float = 0
                                    for k in 1..<bins {  // skip DC
                                        let c = log1p(scale * m[k])
                                        let d = c - prev[k]
                                        if d > 0 { sum += d }
                                        prev[k] = c
                                    }
                                    // Frame 0 has no real predecessor: a clip cut into running audio
                                    // would otherwise start with a spurious "onset" of everything.
                                    out[i] = i == 0 ? 0 : sum
                                }
                            }
                        }
                    }
                }
            }
        }
        return (flux, Double(sampleRate) / Double(hop), hop)
    }

    // MARK: - 3. Detrending

    /// Subtracts a centred moving mean (±0.25 s), half-wave rectifies and scales to unit
    /// standard deviation. `nil` when nothing is left (no onsets).
    static func normalizedNovelty(_ flux: [Float], frameRate: Double) -> [Float]? {
        let count = flux.count
        guard count > 0 else { return nil }
        let radius = max(1, Int((0.25 * frameRate).rounded()))
        var prefix = [Double](repeating: 0, count: count + 1)
        for i in 0..<count { prefix[i + 1] = prefix[i] + Double(flux[i]) }
        var out = [Float](repeating: 0, count: count)
        var sum = 0.0, sumSq = 0.0
        for i in 0..<count {
            let lo = max(0, i - radius), hi = min(count, i + radius + 1)
            let mean = (prefix[hi] - prefix[lo]) / Double(hi - lo)
            let v = max(0, Double(flux[i]) - mean)
            out[i] = Float(v)
            sum += v
            sumSq += v * v
        }
        let mean = sum / Double(count)
        let variance = sumSq / Double(count) - mean * mean
        guard variance > 1e-12 else { return nil }
        let inv = Float(1 / variance.squareRoot())
        for i in 0..<count { out[i] *= inv }
        return out
    }

    // MARK: - 4–6. Periodicity

    /// Biased autocorrelation `r[l] = (1/N) Σ o[t]·o[t+l]` for `l` in `0...maxLag`.
    static func autocorrelation(_ o: [Float], maxLag: Int) -> [Double] {
        let count = o.count
        let maxLag = min(maxLag, count - 1)
        guard maxLag >= 0 else { return [] }
        var r = [Double](repeating: 0, count: maxLag + 1)
        o.withUnsafeBufferPointer { x in
            for l in 0...maxLag {
                var acc: Float = 0
                for t in 0..<(count - l) { acc += x[t] * x[t + l] }
                r[l] = Double(acc) / Double(count)
            }
        }
        return r
    }

    /// Gaussian smoothing (σ in frames, radius 3σ). Used before autocorrelation so that a
    /// period falling between two integer lags still gives one clear peak.
    static func smoothed(_ x: [Float], sigma: Double) -> [Float] {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        var kernel = (-radius...radius).map { Float(exp(-0.5 * Double($0 * $0) / (sigma * sigma))) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var out = [Float](repeating: 0, count: x.count)
        for i in 0..<x.count {
            var acc: Float = 0
            for j in -radius...radius where i + j >= 0 && i + j < x.count {
                acc += kernel[j + radius] * x[i + j]
            }
            out[i] = acc
        }
        return out
    }

    /// Log-normal tempo prior: `exp(-½ (log2(bpm / 120) / σ)²)` with σ = 1 octave.
    static func prior(bpm: Double) -> Double {
        let z = log2(bpm / 120) / 1.0
        return exp(-0.5 * z * z)
    }

    /// Parabolic interpolation around the integer index `i` of `y`: (fractional position, value).
    static func parabolicPeak(_ y: [Double], _ i: Int) -> (position: Double, value: Double) {
        guard i > 0, i + 1 < y.count else { return (Double(i), y[i]) }
        let a = y[i - 1], b = y[i], c = y[i + 1]
        let denom = a - 2 * b + c
        guard denom < 0 else { return (Double(i), b) }
        let delta = max(-0.5, min(0.5, 0.5 * (a - c) / denom))
        return (Double(i) + delta, b - 0.25 * (a - c) * delta)
    }

    /// The integer index of the largest local maximum of `y` in `lo...hi` (clamped), if any.
    static func localMax(_ y: [Double], _ lo: Int, _ hi: Int) -> Int? {
        let a = max(1, lo), b = min(hi, y.count - 2)
        guard a <= b else { return nil }
        var best: Int?
        for i in a...b {
            if y[i] >= y[i - 1], y[i] >= y[i + 1], best.map({ y[i] > y[$0] }) ?? true { best = i }
        }
        return best
    }

    /// The beat period in envelope frames (fractional) and the confidence.
    static func estimatePeriod(onset: [Float], frameRate fr: Double) -> (lag: Double, confidence: Double)? {
        let lo = Int((fr * 60 / maxBPM).rounded(.up))
        let hi = Int((fr * 60 / minBPM).rounded(.down))
        guard lo >= 2, hi > lo else { return nil }
        let maxLag = min(onset.count / 2, 8 * hi + 2)
        guard maxLag > hi else { return nil }

        let smooth = smoothed(onset, sigma: acfSmoothing)
        let mean = smooth.reduce(0, +) / Float(smooth.count)
        // Centred ACF: ≈ 0 at lags without periodicity, so peak heights compare directly.
        let r = autocorrelation(smooth.map { $0 - mean }, maxLag: maxLag)

        // 4. Prior-weighted choice among positive local maxima in the tempo range.
        var bestLag: Int?
        var bestScore = 0.0
        for l in lo...hi where r[l] > 0 && r[l] >= r[l - 1] && r[l] >= r[l + 1] {
            let score = r[l] * prior(bpm: 60 * fr / Double(l))
            if score > bestScore { bestScore = score; bestLag = l }
        }
        // No periodic structure at all: fall back to the largest value (confidence will be low).
        let chosen = bestLag ?? (lo...hi).max { r[$0] < r[$1] }!
        var (period, height) = parabolicPeak(r, chosen)

        // 5. Octave check: prefer the faster pulse when it is (nearly) as strong.
        while height > 0 {
            let half = period / 2
            guard 60 * fr / half <= maxBPM * 1.01,
                let h = localMax(r, Int(half.rounded(.down)) - 1, Int(half.rounded(.up)) + 1)
            else { break }
            let (hp, hv) = parabolicPeak(r, h)
            guard hv >= octaveRatio * height else { break }
            period = hp
            height = hv
        }

        // Confidence from the uncentred ACF, as peak height against the mean over the range.
        let raw = autocorrelation(smooth, maxLag: hi + 1)
        let meanRaw = raw[lo...hi].reduce(0, +) / Double(hi - lo + 1)
        let peakIndex = min(hi + 1, max(1, Int(period.rounded())))
        let peakRaw = parabolicPeak(raw, peakIndex).value
        let confidence = peakRaw > 0 ? max(0, min(1, 1 - meanRaw / peakRaw)) : 0

        // 6. Harmonic refinement: least-squares fit of lag_k ≈ k · period.
        if height > 0 {
            var sumKL = period, sumKK = 1.0
            for k in 2...8 {
                let target = Double(k) * (sumKL / sumKK)
                let radius = max(1.5, 0.03 * target)
                let a = Int((target - radius).rounded(.down)), b = Int((target + radius).rounded(.up))
                guard b + 1 < r.count else { break }
                if let m = localMax(r, a, b) {
                    let (p, v) = parabolicPeak(r, m)
                    if v >= 0.5 * height {
                        sumKL += Double(k) * p
                        sumKK += Double(k * k)
                    }
                }
            }
            period = sumKL / sumKK
        }
        return (period, confidence)
    }

    // MARK: - 7. Beat tracking

    /// Dynamic-programming beat tracker. Returns beat positions in (fractional) frames.
    static func trackBeats(onset o: [Float], period p: Double, tightness: Double = 100) -> [Double] {
        let count = o.count
        guard count > 0, p >= 1 else { return [] }
        let dMin = max(1, Int((p / 2).rounded()))
        let dMax = max(dMin, Int((2 * p).rounded()))
        var penalty = [Double](repeating: 0, count: dMax + 1)
        for d in dMin...dMax {
            let x = log(Double(d) / p)
            penalty[d] = tightness * x * x
        }
        var score = [Double](repeating: 0, count: count)
        var back = [Int](repeating: -1, count: count)
        for t in 0..<count {
            var best = 0.0, arg = -1
            if t - dMin >= 0 {
                for d in dMin...min(dMax, t) {
                    let v = score[t - d] - penalty[d]
                    if v > best { best = v; arg = t - d }
                }
            }
            score[t] = Double(o[t]) + best
            back[t] = arg
        }

        // Last beat: best score within the final period.
        let tailStart = max(0, count - Int(p.rounded(.up)) - 1)
        var end = tailStart
        for t in tailStart..<count where score[t] > score[end] { end = t }

        var frames: [Int] = []
        var t = end
        while t >= 0 { frames.append(t); t = back[t] }
        frames.reverse()

        // Trim weak beats at both ends.
        if !frames.isEmpty {
            let strengths = frames.map { o[$0] }.sorted()
            let floor = 0.1 * strengths[strengths.count / 2]
            while let first = frames.first, o[first] < floor { frames.removeFirst() }
            while let last = frames.last, o[last] < floor { frames.removeLast() }
        }

        // Sub-frame refinement on the envelope.
        return frames.map { f in
            guard f > 0, f + 1 < count else { return Double(f) }
            let a = Double(o[f - 1]), b = Double(o[f]), c = Double(o[f + 1])
            let denom = a - 2 * b + c
            guard denom < 0, b >= a, b >= c else { return Double(f) }
            return Double(f) + max(-0.5, min(0.5, 0.5 * (a - c) / denom))
        }
    }
}

// MARK: - FFT

/// Work buffers for ``RealFFT`` (kept outside so one FFT can be shared).
struct FFTScratch {
    var re: [Float]
    var im: [Float]
    init(size n: Int) {
        re = [Float](repeating: 0, count: n / 2)
        im = [Float](repeating: 0, count: n / 2)
    }
}

/// Real-input FFT of a power-of-two size `n`, computed as an `n/2`-point complex radix-2
/// Cooley–Tukey FFT (iterative, decimation in time) on the even/odd samples packed as
/// real/imaginary parts, followed by the standard split step.
struct RealFFT {
    let n: Int
    private let m: Int  // n / 2, the complex FFT size
    private let bitReverse: [Int]  // m entries
    private let cosM: [Float]  // cos(2πj/m), j < m/2
    private let sinM: [Float]
    private let cosN: [Float]  // cos(2πk/n), k ≤ m
    private let sinN: [Float]

    init(size n: Int) {
        precondition(n >= 4 && n & (n - 1) == 0, "FFT size must be a power of two ≥ 4")
        self.n = n
        m = n / 2
        let bits = m.trailingZeroBitCount
        bitReverse = (0..<m).map { i in
            var r = 0, v = i
            for _ in 0..<bits { r = r << 1 | (v & 1); v >>= 1 }
            return r
        }
        let mm = m
        cosM = (0..<max(1, mm / 2)).map { Float(cos(2 * Double.pi * Double($0) / Double(mm))) }
        sinM = (0..<max(1, mm / 2)).map { Float(sin(2 * Double.pi * Double($0) / Double(mm))) }
        cosN = (0...mm).map { Float(cos(2 * Double.pi * Double($0) / Double(n))) }
        sinN = (0...mm).map { Float(sin(2 * Double.pi * Double($0) / Double(n))) }
    }

    /// Complex spectrum bins `0...n/2` of the `n` real samples `x`.
    func spectrum(_ x: [Float]) -> (re: [Float], im: [Float]) {
        var re = [Float](repeating: 0, count: m + 1), im = re
        var scratch = FFTScratch(size: n)
        x.withUnsafeBufferPointer { xp in
            re.withUnsafeMutableBufferPointer { rp in
                im.withUnsafeMutableBufferPointer { ip in
                    transform(xp, scratch: &scratch) { k, r, i in
                        rp[k] = r; ip[k] = i
                    }
                }
            }
        }
        return (re, im)
    }

    /// Magnitudes of bins `0...n/2` of the `n` real samples `x`, written to `out` (`n/2 + 1` values).
    func magnitudes(
        _ x: UnsafeMutableBufferPointer<Float>, into out: UnsafeMutableBufferPointer<Float>, scratch: inout FFTScratch
    ) {
        transform(UnsafeBufferPointer(x), scratch: &scratch) { k, r, i in out[k] = (r * r + i * i).squareRoot() }
    }

    private func transform(
        _ x: UnsafeBufferPointer<Float>, scratch: inout FFTScratch, emit: (Int, Float, Float) -> Void
    ) {
        precondition(x.count >= n)
        let m = self.m
        scratch.re.withUnsafeMutableBufferPointer { re in
            scratch.im.withUnsafeMutableBufferPointer { im in
                bitReverse.withUnsafeBufferPointer { rev in
                    for j in 0..<m {
                        let d = rev[j]
                        re[d] = x[2 * j]
                        im[d] = x[2 * j + 1]
                    }
                }
                cosM.withUnsafeBufferPointer { cw in
                    sinM.withUnsafeBufferPointer { sw in
                        var size = 2
                        while size <= m {
                            let halfSize = size / 2
                            let step = m / size
                            var start = 0
                            while start < m {
                                for k in 0..<halfSize {
                                    let wr = cw[k * step], wi = -sw[k * step]
                                    let a = start + k, b = a + halfSize
                                    let tr = wr * re[b] - wi * im[b]
                                    let ti = wr * im[b] + wi * re[b]
                                    re[b] = re[a] - tr
                                    im[b] = im[a] - ti
                                    re[a] += tr
                                    im[a] += ti
                                }
                                start += size
                            }
                            size <<= 1
                        }
                    }
                }
                // Split step: X[k] = E[k] + W^k O[k], with E/O recovered from Z[k] and conj(Z[m-k]).
                cosN.withUnsafeBufferPointer { cn in
                    sinN.withUnsafeBufferPointer { sn in
                        for k in 0...m {
                            let k1 = k == m ? 0 : k
                            let k2 = k == 0 ? 0 : m - k
                            let zr = re[k1], zi = im[k1]
                            let cr = re[k2], ci = -im[k2]
                            let er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci)
                            let dr = zr - cr, di = zi - ci
                            let or = 0.5 * di, oi = -0.5 * dr
                            let wr = cn[k], wi = -sn[k]
                            emit(k, er + wr * or - wi * oi, ei + wr * oi + wi * or)
                        }
                    }
                }
            }
        }
    }
}
