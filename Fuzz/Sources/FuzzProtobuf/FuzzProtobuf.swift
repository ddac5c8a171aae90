// libFuzzer entry point for the protobuf codec (protobuf-c underneath) and the schema-less raw decoder.
// Build and run through the Fuzz package (`make fuzz`); seeds live in Fixtures/fuzz/FuzzProtobuf/.
//
// Every input must end in a value or a CourierError: never a crash, a hang or unbounded memory. Whatever
// decodes must re-encode, and the re-encoded bytes must decode to the same value (NaN aside): CourierTesting's
// FuzzOracle, which CourierCodecsTests.FuzzCorpusTests also runs over Fixtures/fuzz/FuzzProtobuf.
import CourierCodecs
import CourierTesting
import Foundation

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private let schema: ProtobufSchema = {
    let url = repositoryRoot.appendingPathComponent("Schemas/demo.pb")
    do {
        return try ProtobufSchema(contentsOf: url)
    } catch {
        fatalError("FuzzProtobuf: cannot load \(url.path): \(error)")
    }
}()

private let oracles: [FuzzOracle] = {
    var hints = CodingHints()
    hints.messageType = "demo.UserListResponse"
    var lenientOptions = ProtobufCodec.Options()
    lenientOptions.unknownFields = .discard
    lenientOptions.includeDefaultValues = false
    var strict = FuzzOracle(codec: ProtobufCodec(schema: schema), hints: hints)
    strict.requiresStableEncoding = false
    var lenient = FuzzOracle(codec: ProtobufCodec(schema: schema, options: lenientOptions), hints: hints)
    lenient.requiresStableEncoding = false
    return [strict, lenient]
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    for oracle in oracles { oracle.assertHolds(input) }
    let raw = ProtobufRawDecoder()
    do {
        _ = try raw.decode(input)
        _ = try raw.text(input)
    } catch {
        guard error is CourierError else { fatalError("non-Courier error: \(error)") }
    }
    return 0
}
