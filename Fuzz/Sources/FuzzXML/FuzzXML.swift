// libFuzzer entry point for the XML codec. Build with `swiftc -sanitize=fuzzer` (see the Fuzz package);
// seeds live in Fixtures/fuzz/FuzzXML/.
//
// Properties checked on every input (the first two are CourierTesting's FuzzOracle, which
// CourierCodecsTests.FuzzCorpusTests also runs over Fixtures/fuzz/FuzzXML in `make test`):
// - decoding, with and without a shape, never crashes and fails only with a CourierError;
// - whatever decodes without a shape re-encodes and decodes back to the same Value, or fails to encode with
//   `.encodingFailed` (a nil element whose own namespace declaration is dropped by the mapping);
// - whatever decodes with the user-list shape re-encodes in the wrapper form and reads back.
@_spi(Fuzzing) import CourierCodecs
import CourierTesting
import Foundation

private let options: XMLCodec.Options = {
    var options = XMLCodec.Options()
    options.maximumDepth = 64
    return options
}()

private let oracle: FuzzOracle = {
    var oracle = FuzzOracle(codec: XMLCodec(options: options))
    oracle.acceptedEncodingFailures = [.encodingFailed]
    oracle.requiresStableEncoding = false
    return oracle
}()

private let shapedHints: CodingHints = {
    var hints = CodingHints()
    hints.shape = .object([
        "code": .integer,
        "message": .optional(.string),
        "data": .object([
            "page": .integer,
            "total": .integer,
            "users": .array(
                .object([
                    "id": .integer, "name": .string, "email": .string, "age": .optional(.integer), "score": .number,
                    "active": .bool, "tags": .array(.string), "avatar": .bytes,
                    "address": .object(["city": .string, "street": .string, "zip": .string]),
                ])),
        ]),
    ])
    return hints
}()

private func expectCourierError(_ error: any Error, _ stage: String) {
    if !(error is CourierError) { fatalError("\(stage) threw a non-Courier error: \(error)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    oracle.assertHolds(input)

    // Shape-guided decoding is not reversible in general (an empty array leaves no element), so its
    // re-encoding, in the wrapper form, must only read back without a non-Courier error.
    let codec = XMLCodec(options: options)
    do {
        let value = try codec.decode(input, hints: shapedHints)
        var wrapped = options
        wrapped.arrayItemName = .dropTrailingS
        if let encoded = try? XMLCodec(options: wrapped).encode(value, hints: shapedHints) {
            do {
                _ = try codec.decode(encoded, hints: shapedHints)
            } catch {
                expectCourierError(error, "shaped re-decode")
            }
        }
    } catch {
        expectCourierError(error, "shaped decode")
    }
    // What the parses kept for the next input would read as leaked at exit (see XMLCodecFuzzing).
    XMLCodecFuzzing.forgetKeptShapes()
    return 0
}
