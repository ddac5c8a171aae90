import Courier
import CourierCodecs
import CourierSchema
import Foundation
import HTTPTypes

/// The `--config` file: modules with their base URLs, header fields, interceptors and business rules.
struct CLIConfiguration {
    var modules: [APIModule]
    var globalInterceptors: [any Interceptor]

    init(path: String) throws {
        let data = try Arguments.read(path, limit: Arguments.configurationLimit, what: "the configuration file \(path)")
        try self.init(value: try JSONCodec().decode(data, hints: CodingHints()))
    }

    init(value: Value) throws {
        modules = []
        globalInterceptors = try (value["interceptors"]?.arrayValue ?? []).map(Self.interceptor)
        for (index, entry) in (value["modules"]?.arrayValue ?? []).enumerated() {
            guard let name = entry["name"]?.stringValue, let text = entry["baseURL"]?.stringValue,
                let baseURL = URL(string: text)
            else {
                throw CourierError(.invalidConfiguration, detail: "modules[\(index)] needs a name and a baseURL")
            }
            var module = APIModule(name: name, service: APIService(name: name, baseURL: baseURL))
            for (field, fieldValue) in entry["headers"]?.objectValue ?? [:] {
                guard let fieldName = HTTPField.Name(field), let text = fieldValue.stringValue else {
                    throw CourierError(.invalidConfiguration, detail: "modules[\(index)].headers.\(field) is not a valid header")
                }
                module.headers[fieldName] = text
            }
            module.interceptors = try (entry["interceptors"]?.arrayValue ?? []).map(Self.interceptor)
            if let rule = entry["businessRule"] {
                let codePath = (rule["codePath"]?.stringValue ?? "code").split(separator: ".").map { PathComponent.key(String($0)) }
                let messagePath = (rule["messagePath"]?.stringValue ?? "message").split(separator: ".")
                    .map { PathComponent.key(String($0)) }
                let success = Set((rule["successCodes"]?.arrayValue ?? [0, 200]).compactMap { $0.int64Value.map(Int.init) })
                module.businessRule = BusinessRule(codePath: codePath, messagePath: messagePath, successCodes: success)
            }
            modules.append(module)
        }
    }

    /// Interceptors a configuration file can name.
    static func interceptor(_ entry: Value) throws -> any Interceptor {
        switch entry["type"]?.stringValue {
        case "requestID":
            return RequestID()
        case "headers":
            var fields = HTTPFields()
            for (name, value) in entry["headers"]?.objectValue ?? [:] {
                guard let fieldName = HTTPField.Name(name), let text = value.stringValue else {
                    throw CourierError(.invalidConfiguration, detail: "invalid header \(name) in a headers interceptor")
                }
                fields[fieldName] = text
            }
            return SetHeaders(fields)
        case let other:
            throw CourierError(.invalidConfiguration,
                               detail: "unknown interceptor type '\(other ?? "none")' (known: requestID, headers)")
        }
    }

    /// The module named `name`, else the one whose base URL prefixes `url`.
    func module(named name: String?, for url: String) throws -> APIModule? {
        if let name {
            guard let found = modules.first(where: { $0.name == name }) else {
                throw CourierError(.invalidConfiguration, detail: "no module named \(name) in the configuration")
            }
            return found
        }
        return modules.first { url.hasPrefix($0.service.currentBaseURL.absoluteString) }
    }
}

/// The codecs the tool uses: the standard ones, XML, and protobuf when a schema is given.
enum CLICodecs {
    static func make(schemaPath: String?) throws -> CodecSet {
        var codecs = CodecSet.standard
        var xml = XMLCodec.Options()
        xml.arrayItemName = .dropTrailingS
        codecs.register(XMLCodec(options: xml))
        if let schemaPath {
            codecs.register(ProtobufCodec(schema: try ProtobufSchema(contentsOf: URL(fileURLWithPath: schemaPath))))
        }
        return codecs
    }

    /// The shape a JSON Schema file describes (other schemas in its folder resolve its references).
    static func shape(fromJSONSchema path: String) throws -> ValueShape {
        let url = URL(fileURLWithPath: path)
        var registry = SchemaRegistry()
        let folder = url.deletingLastPathComponent()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasSuffix(".json") && name != url.lastPathComponent {
            _ = try? registry.add(contentsOf: folder.appendingPathComponent(name))
        }
        return try registry.compile(id: try registry.add(contentsOf: url)).shape
    }

    /// The format named `name`, else the one `path`'s extension suggests, else JSON.
    static func format(named name: String?, path: String) throws -> ContentFormat {
        if let name {
            guard let format = ContentFormat(name: name) else {
                throw CourierError(.invalidConfiguration, detail: "unknown format '\(name)' (json, xml, protobuf)")
            }
            return format
        }
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "xml": return .xml
        case "pb", "bin", "protobuf": return .protobuf
        default: return .json
        }
    }
}

/// Protobuf answers decoded without a schema (`courier send --raw`): field numbers and wire values.
struct RawProtobufCodec: Codec {
    var format: ContentFormat { .protobuf }

    func decode(_ data: Data, hints: CodingHints) throws -> Value { try ProtobufRawDecoder().decode(data) }

    func encode(_ value: Value, hints: CodingHints) throws -> Data {
        throw CourierError(.invalidConfiguration, detail: "--raw decodes protobuf answers; sending protobuf needs --schema")
    }
}
