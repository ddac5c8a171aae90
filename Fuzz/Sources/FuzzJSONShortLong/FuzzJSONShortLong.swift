// libFuzzer entry point for JSONCodec's small-document shortcuts: any bytes must give the same outcome
// as the same bytes padded with trailing whitespace past the length that turns the parser's string table
// on (an equal value whose members keep the same order, so it re-encodes to the same bytes, or a
// CourierError with the same code); and a list repeating the decoded value (objects of one layout share
// their member-name arrays) must hold equal copies. Any difference traps.
import Courier
import Foundation

private let codec: JSONCodec = {
    var options = JSONCodec.Options()
    options.maximumDepth = 64
    return JSONCodec(options: options)
}()

private enum Outcome: Equatable {
    case value(Value, [UInt8])
    case failure(CourierError.Code)
}

private func outcome(_ bytes: [UInt8]) -> Outcome {
    do {
        let value = try codec.decode(bytes)
        return .value(value, (try? codec.encode(value)) ?? [])
    } catch let error as CourierError {
        return .failure(error.code)
    } catch {
        fatalError("not a CourierError: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let short = outcome(bytes)
    let long = outcome(bytes + [UInt8](repeating: UInt8(ascii: " "), count: 4200))
    switch (short, long) {
    case (.failure(let a), .failure(let b)):
        precondition(a == b, "short input fails with \(a), long input with \(b)")
    case (.value(let a, let encodedA), .value(let b, let encodedB)):
        precondition(a == b && encodedA == encodedB, "short and long inputs decode differently")
        guard size < 2000, let list = try? codec.decode(Array("[\(String(decoding: encodedA, as: UTF8.self)),\(String(decoding: encodedA, as: UTF8.self)),\(String(decoding: encodedA, as: UTF8.self))]".utf8)),
            case .array(let copies) = list
        else { return 0 }
        for copy in copies {
            precondition(copy == a && (try? codec.encode(copy)) == encodedA, "a repeated value decodes differently")
        }
    default:
        preconditionFailure("short input: \(short), long input: \(long)")
    }
    return 0
}
