/// A typed JSON encoder or decoder that a ``JSONCoderPool`` can hand out again once it is finished.
protocol JSONPooledCoder: AnyObject {
    /// The coder one level up, for the coding path.
    var parent: Self? { get set }
    /// This coder's own path component.
    var component: PathComponent? { get set }
}

/// Finished child coders nobody else holds, reused for the next children: one allocation per nesting level
/// rather than per nested value. The coders hold their owner strongly, so the owner calls ``drain()`` when
/// the encode or decode ends.
struct JSONCoderPool<Coder: JSONPooledCoder> {
    private var spare: [Coder] = []

    init(capacity: Int = 0) {
        spare.reserveCapacity(capacity)
    }

    /// A finished coder to reuse, if there is one.
    @inline(__always)
    mutating func take() -> Coder? { spare.popLast() }

    /// Takes `coder` back for reuse when nothing else holds it.
    @inline(__always)
    mutating func recycle(_ coder: inout Coder) {
        guard isKnownUniquelyReferenced(&coder) else { return }
        coder.parent = nil
        coder.component = nil
        spare.append(coder)
    }

    /// Releases the pooled coders (they hold the pool's owner strongly).
    mutating func drain() {
        spare.removeAll()
    }
}
