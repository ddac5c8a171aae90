/// The stored fields of a value type in one heap box, copied when a shared box is written to: the storage of
/// ``CourierRequest``, ``CourierResponse``, ``Endpoint`` and ``InterceptorContext``.
///
/// Every stage of a call receives the request, passes it on and returns the response, and the call copies its
/// endpoint into its context and its task. As plain structs they are about 470, 450 and 540 bytes: each pass
/// copied and later destroyed a dozen or more reference-counted fields, and every suspended stage's async frame
/// held its copies (a task's frames past its first kilobyte are `malloc`ed in 1 KB slabs). Boxed, a copy is one
/// retain and a frame holds one pointer; a write to a shared box copies it once.
///
/// The owner reads `fields` directly and writes through ``unique(_:)``, which replaces a shared box with a copy
/// first:
///
/// ```swift
/// private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> { CopyOnWriteBox.unique(&storage) }
///
/// public var head: HTTPRequest {
///     get { storage.fields.head }
///     _modify { yield &uniqueStorage().fields.head }
/// }
/// ```
final class CopyOnWriteBox<Fields: Sendable>: @unchecked Sendable {
    /// Written only through ``unique(_:)``, when no other value shares this box, so no other
    /// thread can see the write (hence `@unchecked Sendable`). The owner is a struct, whose own accesses Swift
    /// checks for exclusivity, and every access to the box goes through it: the box's own dynamic check (a
    /// runtime call on every write of a field) is redundant, and off.
    @exclusivity(unchecked) var fields: Fields

    init(_ fields: Fields) { self.fields = fields }

    /// `box`, after replacing it with a copy when another value shares it: the box an owner's write goes to.
    @inline(__always)
    static func unique(_ box: inout CopyOnWriteBox) -> CopyOnWriteBox {
        if !isKnownUniquelyReferenced(&box) { box = CopyOnWriteBox(box.fields) }
        return box
    }
}
