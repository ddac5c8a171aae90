import ArgumentParser
import Courier
import CourierCodecs
import Foundation

/// Options shared by `convert` and `decode`.
struct FormatOptions: ParsableArguments {
    @Option(help: "Protobuf schema: a .proto file or a descriptor set (needed for protobuf unless --raw).")
    var schema: String?

    @Option(help: "The full protobuf message name, e.g. demo.UserListResponse.")
    var message: String?

    @Option(help: "A JSON Schema whose shape guides XML decoding (arrays of one, numbers from text).")
    var shape: String?

    func codecs() throws -> CodecSet { try CLICodecs.make(schemaPath: schema) }

    func hints() throws -> CodingHints {
        var hints = CodingHints()
        hints.messageType = message
        if let shape {
            hints.shape = try CLICodecs.shape(fromJSONSchema: shape)
        } else if let schema, let message {
            hints.shape = try ProtobufSchema(contentsOf: URL(fileURLWithPath: schema)).shape(of: message)
        }
        return hints
    }
}

/// The document at `path` (standard input for nil or `-`), at most ``Arguments/inputLimit`` bytes: reading
/// stops one byte past it with ``CourierError/Code/sizeLimitExceeded``.
func readInput(_ path: String?) throws -> Data {
    try Arguments.read(path, limit: Arguments.inputLimit)
}

struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a document between JSON, XML and protobuf (through Courier's Value).",
        discussion: """
            Examples:
              courier convert --from xml --to protobuf --schema Schemas/demo.proto --message demo.UserListResponse < in.xml > out.pb
              courier convert --from protobuf --to json --schema Schemas/demo.pb --message demo.UserListResponse < out.pb
              courier convert --from json --to xml --root response < Fixtures/users_10.json
            """)

    @Option(help: "The input format: json, xml or protobuf.")
    var from: String

    @Option(help: "The output format: json, xml or protobuf.")
    var to: String

    @Option(help: "The XML root element name when writing XML.")
    var root: String?

    @Flag(help: "Indent JSON output.")
    var pretty = false

    @OptionGroup var formats: FormatOptions

    @Argument(help: "The input file (default: standard input).")
    var input: String?

    func run() async throws {
        do {
            let source = try CLICodecs.format(named: from, path: "")
            let target = try CLICodecs.format(named: to, path: "")
            var codecs = try formats.codecs()
            if pretty { codecs.register(JSONCodec(options: { var o = JSONCodec.Options(); o.pretty = true; return o }())) }
            var hints = try formats.hints()
            let value = try codecs.decode(try readInput(input), format: source, hints: hints)
            hints.rootName = root
            let output = try codecs.encode(value, format: target, hints: hints)
            FileHandle.standardOutput.write(output)
            if target != .protobuf { FileHandle.standardOutput.write(Data("\n".utf8)) }
        } catch {
            throw fail(error)
        }
    }
}

struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode a JSON, XML or protobuf document and print it as a raw value.",
        discussion: """
            Examples:
              courier decode --format protobuf --raw < Fixtures/users_10.pb          (like protoc --decode_raw)
              courier decode --format protobuf --schema Schemas/demo.proto --message demo.UserListResponse < Fixtures/users_10.pb
              courier decode --format xml Fixtures/users_10.xml
            """)

    @Option(help: "The input format: json, xml or protobuf.")
    var format: String

    @Flag(help: "Protobuf without a schema: field numbers and wire values, as protoc --decode_raw prints them.")
    var raw = false

    @OptionGroup var formats: FormatOptions

    @Argument(help: "The input file (default: standard input).")
    var input: String?

    func run() async throws {
        do {
            let source = try CLICodecs.format(named: format, path: "")
            let data = try readInput(input)
            if raw {
                guard source == .protobuf else {
                    throw CourierError(.invalidConfiguration, detail: "--raw applies to protobuf input")
                }
                print(try ProtobufRawDecoder().text(data), terminator: "")
                return
            }
            print(render(try formats.codecs().decode(data, format: source, hints: try formats.hints())))
        } catch {
            throw fail(error)
        }
    }
}
