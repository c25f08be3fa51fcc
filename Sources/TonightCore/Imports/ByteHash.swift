/// A 64-bit hash of raw bytes, eight at a time: how an import recognises a record whose bytes in
/// the file are the same as when it was last read, without parsing it (a refresh of the benchmark
/// feed hashes 122 MB this way in a few hundredths of a second).
///
/// Each step maps the state one-to-one for a given word, so two inputs of the same length that
/// differ in one word never collide; otherwise a collision is one in 2⁶⁴ (not a security measure).
/// The words are read little-endian, so the value is the same on every machine and in every version.
public enum ByteHash {
    /// The hash of `bytes`.
    public static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64 {
        let n = bytes.count
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(n)
        guard let p = bytes.baseAddress else { return Int64(bitPattern: finish(h)) }
        var k = 0
        while k + 8 <= n {
            h = step(h, UInt64(littleEndian: UnsafeRawPointer(p + k).loadUnaligned(as: UInt64.self)))
            k += 8
        }
        if k < n {
            var word: UInt64 = 0
            for j in k..<n { word |= UInt64(p[j]) << UInt64(8 * (j - k)) }
            h = step(h, word)
        }
        return Int64(bitPattern: finish(h))
    }

    /// The hash of an array's bytes.
    public static func of(_ bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBufferPointer { of($0) }
    }

    @inline(__always)
    private static func step(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let mixed = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
        return mixed << 29 | mixed >> 35
    }

    /// MurmurHash3's finaliser: every bit of the state reaches every bit of the hash.
    private static func finish(_ h: UInt64) -> UInt64 {
        var h = h
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}
