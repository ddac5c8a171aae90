import ArgumentParser
import Courier
import CourierCodecs
import CourierSchema
import Foundation

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a JSON, XML or protobuf document against a JSON Schema.",
        discussion: """
            Prints "valid" and exits 0, or prints each violation and exits 1. Other schemas in the schema's folder
            are loaded too, so $refs between them resolve (never over the network).

            Examples:
              courier validate --schema Schemas/userlist.schema.json Fixtures/users_10.json
              courier validate --schema Schemas/userlist.schema.json --format xml Fixtures/users_10.xml
              courier validate --schema Schemas/userlist.schema.json --format protobuf \\
                  --proto Schemas/demo.proto --message demo.UserListResponse Fixtures/users_10.pb
              courier validate --schema Schemas/user.schema.json --pointer '#/$defs/response' answer.json
            """)

    @Option(help: "The JSON Schema file.")
    var schema: String

    @Option(help: "A JSON Pointer fragment into the schema, e.g. '#/$defs/response'.")
    var pointer: String?

    @Option(help: "The document's format: json, xml or protobuf (default: by file extension).")
    var format: String?

    @Option(help: "With --format protobuf: a .proto file or a descriptor set.")
    var proto: String?

    @Option(help: "With --format protobuf: the full message name.")
    var message: String?

    @Flag(help: "Assert `format` keywords (date-time, email, uri, ...) instead of treating them as annotations.")
    var assertFormat = false

    @Argument(help: "The document to validate (- for standard input).")
    var file: String

    func run() async throws {
        do {
            let schemaURL = URL(fileURLWithPath: schema)
            var registry = SchemaRegistry()
            let folder = schemaURL.deletingLastPathComponent()
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            where name.hasSuffix(".json") && name != schemaURL.lastPathComponent {
                _ = try? registry.add(contentsOf: folder.appendingPathComponent(name))
            }
            let id = try registry.add(contentsOf: schemaURL)
            var options = CompiledSchema.Options()
            options.assertFormat = assertFormat
            let compiled = try registry.compile(id: id + (pointer ?? ""), options: options)

            let data = try readInput(file)
            let documentFormat = try CLICodecs.format(named: format, path: file)
            var hints = CodingHints()
            hints.shape = compiled.shape
            hints.messageType = message
            let codecs = try CLICodecs.make(schemaPath: proto)
            let value = try codecs.decode(data, format: documentFormat, hints: hints)
            let violations = compiled.validate(value)
            guard !violations.isEmpty else {
                print("valid")
                return
            }
            for violation in violations {
                print("\(violation.message)   [\(violation.keyword) at \(violation.keywordLocation)]")
            }
            print("\(violations.count) violation\(violations.count == 1 ? "" : "s")")
            throw ExitCode(1)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }
}
