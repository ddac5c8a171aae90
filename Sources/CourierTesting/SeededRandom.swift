/// A seeded SplitMix64 random number generator: small, fast and the same on every platform and run, so a
/// generated test case can be reproduced from its seed. The generators of this module use it; use it for
/// your own test data too (it is a `RandomNumberGenerator`, so `Int.random(in:using:)` takes it).
///
/// ```swift
/// var random = SeededRandom(seed: 42)
/// let size = Int.random(in: 0..<64, using: &random)
/// let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is determined by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(next() % UInt64(bound)) }

    /// `true` with a chance of `percent` in 100.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
