import Foundation

/// An element or attribute name interned by an ``XMLPullParser``: comparing two names is comparing two integers.
///
/// A name is only meaningful for the parser that made it (see ``XMLPullParser/name(_:)``).
public struct XMLName: Hashable, Sendable {
    /// The index of the name in its parser's table.
    public let id: Int32
}

/// Interned names: raw UTF-8 bytes in one store, an open-addressing hash index over them.
struct XMLNameTable: ~Copyable {
    private var store: UnsafeMutablePointer<UInt8>
    private var storeCount = 0
    private var storeCapacity = 4096
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private(set) var strings: [String] = []
    private var slots: UnsafeMutablePointer<Int32>
    private var slotMask = 255

    init() {
        store = .allocate(capacity: storeCapacity)
        slots = .allocate(capacity: slotMask + 1)
        slots.initialize(repeating: -1, count: slotMask + 1)
    }

    deinit {
        store.deallocate()
        slots.deallocate()
    }

    var count: Int { strings.count }

    /// The stored bytes of name `id`.
    func bytes(_ id: Int32) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: store + offsets[Int(id)], count: lengths[Int(id)])
    }

    @inline(__always)
    private static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var h: UInt32 = 2_166_136_261
        for k in 0..<n { h = (h ^ UInt32(p[k])) &* 16_777_619 }
        return Int(h)
    }

    /// The id of the name spelled by `p[0..<n]`, nil when it is not interned.
    func find(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int32? {
        var slot = Self.hash(p, n) & slotMask
        while true {
            let id = slots[slot]
            if id < 0 { return nil }
            if lengths[Int(id)] == n && memcmp(store + offsets[Int(id)], p, n) == 0 { return id }
            slot = (slot + 1) & slotMask
        }
    }

    /// Interns the (already UTF-8 validated) name `string` spelled by `p[0..<n]`.
    mutating func insert(_ p: UnsafePointer<UInt8>, _ n: Int, string: String) -> Int32 {
        if storeCount + n > storeCapacity {
            let newCapacity = max(storeCapacity * 2, storeCount + n)
            let newStore = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            newStore.update(from: store, count: storeCount)
            store.deallocate()
            store = newStore
            storeCapacity = newCapacity
        }
        (store + storeCount).update(from: p, count: n)
        let id = Int32(strings.count)
        offsets.append(storeCount)
        lengths.append(n)
        strings.append(string)
        storeCount += n
        if strings.count * 2 > slotMask { rehash() }
        var slot = Self.hash(p, n) & slotMask
        while slots[slot] >= 0 { slot = (slot + 1) & slotMask }
        slots[slot] = id
        return id
    }

    private mutating func rehash() {
        let newMask = slotMask * 2 + 1
        slots.deallocate()
        slots = .allocate(capacity: newMask + 1)
        slots.initialize(repeating: -1, count: newMask + 1)
        slotMask = newMask
        // Re-index every name except the one being inserted (the caller indexes it).
        for id in 0..<(strings.count - 1) {
            var slot = Self.hash(store + offsets[id], lengths[id]) & slotMask
            while slots[slot] >= 0 { slot = (slot + 1) & slotMask }
            slots[slot] = Int32(id)
        }
    }
}
