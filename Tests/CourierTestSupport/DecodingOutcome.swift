public import Courier

/// What one decode gave, for differential tests that compare two decoding paths: a value (printed), or a
/// Courier error's code and coding path, or another error.
public enum DecodingOutcome: Equatable, CustomStringConvertible, Sendable {
    case value(String)
    case failure(CourierError.Code, String)
    case foreign(String)

    /// The outcome of `body`, which decodes and prints its value.
    public init(_ body: () throws -> String) {
        do {
            self = .value(try body())
        } catch let error as CourierError {
            self = .failure(error.code, PathComponent.render(error.context.codingPath))
        } catch {
            self = .foreign("\(type(of: error)): \(error)")
        }
    }

    public var description: String {
        switch self {
        case .value(let value): return "value \(value.prefix(200))"
        case .failure(let code, let path): return "error \(code) at '\(path)'"
        case .foreign(let text): return "non-Courier error \(text)"
        }
    }

    /// Whether the decode gave a value.
    public var isValue: Bool {
        if case .value = self { return true }
        return false
    }
}

/// A check run once per scalar element type (``forEveryScalarType(_:)``), returning what it found wrong.
public protocol ScalarTypeCheck {
    func check<E: Decodable>(_ type: E.Type) -> [String]
}

extension ScalarTypeCheck {
    /// ``check(_:)`` for `Bool`, `Float`, `Double`, every fixed-width integer, `Int`, `UInt` and `String`.
    public func forEveryScalarType() -> [String] {
        check(Bool.self) + check(Float.self) + check(Double.self) + check(Int8.self) + check(Int16.self)
            + check(Int32.self) + check(Int64.self) + check(UInt8.self) + check(UInt16.self) + check(UInt32.self)
            + check(UInt64.self) + check(Int.self) + check(UInt.self) + check(String.self)
    }
}
