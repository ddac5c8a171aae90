public import Courier
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension XMLCodec {
    /// Decodes a `T` from a document without the `Value` pivot where it can.
    ///
    /// XML cannot say on its own whether `<tag>a</tag>` is a list or `<n>7</n>` a number, so this reads the
    /// document guided by a shape: `hints.shape` when set, else **the model's own shape**
    /// (`ValueShape(of: T.self)`, with member names mapped to snake case when `decoder.keyStrategy` is
    /// `.convertFromSnakeCase`, as `CourierClient` does), computed once per type and cached. The result
    /// is exactly what `decoder.decode(T.self, from: decode(data, hints:))` gives with that shape: the same
    /// model, or a `CourierError` with the same code and coding path. Limits, entity refusal and the
    /// other safety rules of ``decode(_:hints:)`` are the same, as the same reader parses.
    ///
    /// ```swift
    /// struct User: Decodable { var id: Int; var tags: [String] }
    /// let user = try XMLCodec().decode(User.self, from: Data("<user><id>7</id><tag>a</tag></user>".utf8),
    ///                                  hints: CodingHints(), decoder: ValueDecoder())
    /// ```
    public func decode<T: Decodable>(
        _ type: T.Type, from data: Data, hints: CodingHints, decoder: ValueDecoder
    ) throws -> T {
        let shape = hints.shape ?? XMLModelShapes.shape(of: T.self, keys: decoder.keyStrategy)
        let limits = hints.limits ?? options.limits
        if T.self != Value.self {
            return try XMLTapeReader.decode(T.self, from: data, shape: shape, limits: limits, decoder: decoder)
        }
        return try decoder.decode(T.self, from: XMLReader.read(data, shape: shape, limits: limits).value)
    }

    /// Encodes `model` as XML without the `Value` pivot where it can; the bytes (or the
    /// `CourierError`) are exactly those of `encode(encoder.encode(model), hints: hints)`.
    ///
    /// ```swift
    /// var hints = CodingHints()
    /// hints.rootName = "user"
    /// let xml = try XMLCodec().encode(model: user, hints: hints, encoder: ValueEncoder())
    /// ```
    public func encode<T: Encodable>(model: T, hints: CodingHints, encoder: ValueEncoder) throws -> Data {
        var options = self.options
        if let layout = hints.xmlArrayLayout { options.arrayItemName = layout.itemName }
        if let bytes = XMLDirectEncoder.encode(
            model, rootName: hints.rootName ?? options.rootName, options: options, encoder: encoder)
        {
            return Data(bytes)
        }
        // Whatever the direct path cannot reproduce, and every error, goes through the pivot.
        return try encode(encoder.encode(model), hints: hints)
    }
}

/// The shapes of models as the XML codec reads them, computed once per type and key strategy.
enum XMLModelShapes {
    private struct Key: Hashable {
        var type: ObjectIdentifier
        var snakeCase: Bool
    }

    private static let cache = Locked<[Key: ValueShape]>([:])

    /// `T`'s shape, with member names in snake case when `keys` converts from snake case.
    static func shape<T: Decodable>(of type: T.Type, keys: KeyCodingStrategy) -> ValueShape {
        let key = Key(type: ObjectIdentifier(type), snakeCase: keys == .convertFromSnakeCase)
        if let known = cache.withLock({ $0[key] }) { return known }
        var shape = ValueShape(of: type)
        if key.snakeCase { shape = shape.mappingKeys(KeyCodingStrategy.snakeCase(fromCamelCase:)) }
        cache.withLock { $0[key] = shape }
        return shape
    }
}
