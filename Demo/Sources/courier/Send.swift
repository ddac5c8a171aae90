import ArgumentParser
import Courier
import CourierCodecs
import Foundation
import HTTPTypes

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one HTTP request through the Courier chain and print the decoded answer.",
        discussion: """
            Examples:
              courier send GET http://127.0.0.1:8080/users/1
              courier send POST http://127.0.0.1:8080/users --data '{"name":"Ada","email":"a@x.io","age":36}'
              courier send GET http://127.0.0.1:8080/users/1 --format xml --trace
              courier send GET http://127.0.0.1:8080/users/1 --config courier.json

            --data takes JSON and sends it encoded in --format; --data-file sends a file's bytes as they are.

            Transfers stream through the same chain, never whole in memory:
              courier send POST http://127.0.0.1:8080/upload --form title=Holiday --form photo=@photo.jpg
              courier send GET http://127.0.0.1:8080/big.bin --output big.bin --resume
            --form sends multipart/form-data (name=value for a field, name=@path for a file, repeatable);
            --output writes the answer's body to a file (an error answer is printed, not saved), and --resume
            continues from the partial file an interrupted --output left (FILE.part). On a terminal a progress
            bar is drawn on standard error; otherwise progress is printed as plain lines every 10 %.
            The --config file is JSON: {"modules": [{"name": "user", "baseURL": "http://127.0.0.1:8080",
            "headers": {"X-App": "demo"}, "interceptors": [{"type": "requestID"},
            {"type": "headers", "headers": {"X-Platform": "linux"}}], "businessRule": {"codePath": "code",
            "messagePath": "message", "successCodes": [0, 200]}}]}. The module whose baseURL prefixes the URL
            (or --module) supplies headers, interceptors and business-code mapping.
            """)

    @Argument(help: "The HTTP method: GET, POST, PUT, DELETE, PATCH or HEAD.")
    var method: String

    @Argument(help: "The absolute URL.")
    var url: String

    @Option(help: "Wire format of the body and the expected answer: json, xml or protobuf.")
    var format: String = "json"

    @Option(help: "The body as JSON text, encoded in --format.")
    var data: String?

    @Option(help: "A file whose bytes are the body, sent as they are.")
    var dataFile: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header field, name:value (repeatable).")
    var headers: [String] = []

    @Option(name: .customLong("query"), help: "A query parameter, name=value (repeatable).")
    var query: [String] = []

    @Option(help: "Timeout in seconds for the whole exchange, body included (more than 0, at most 86400).")
    var timeout: String?

    @Flag(help: """
        Decode a protobuf answer without a schema: field numbers and wire values, as protoc --decode_raw \
        prints them (JSON and XML answers are always printed as raw values).
        """)
    var raw = false

    @Option(help: "Protobuf schema for decoding: a .proto file or a descriptor set.")
    var schema: String?

    @Option(help: "The full protobuf message name of the answer, e.g. demo.UserResponse.")
    var message: String?

    @Flag(help: "Print the header fields (secret values as REDACTED) and every stage of the chain.")
    var trace = false

    @Option(help: "A JSON file declaring modules and their interceptors.")
    var config: String?

    @Option(help: "With --config: the module to use (default: by base URL).")
    var module: String?

    @Option(help: "Language of error messages: en or zh.")
    var language: String = "en"

    @Option(help: "A multipart/form-data field: name=value, or name=@path for a file, streamed (repeatable).")
    var form: [String] = []

    @Option(help: "Write the answer's body to this file (streamed; an error answer is printed instead).")
    var output: String?

    @Flag(help: "With --output: continue from the partial file an interrupted download left (FILE.part).")
    var resume = false

    func run() async throws {
        let language: CourierError.Language = self.language.hasPrefix("zh") ? .simplifiedChinese : .english
        do {
            let (client, endpoint) = try makeCall()
            let transfer = try makeTransfer()
            if let output = transfer.output {
                let call = client.download(endpoint, to: output, resume: resume, options: CallOptions(trace: trace))
                let reply = try await ProgressPrinter.follow(call)
                let metadata = reply.metadata
                print("HTTP \(metadata.status.code) \(metadata.status.reasonPhrase)  (saved \(reply.value.size) B to "
                      + "\(reply.value.file.path)" + (reply.value.resumedBytes > 0 ? ", resumed from \(reply.value.resumedBytes) B" : "")
                      + ", \(milliseconds(metadata.duration)), call \(metadata.callID))")
                printTrace(metadata)
                return
            }
            let reply: Reply<Value>
            if let multipart = transfer.form {
                reply = try await ProgressPrinter.follow(client.upload(endpoint, form: multipart, options: CallOptions(trace: trace)))
            } else {
                reply = try await client.send(endpoint, options: CallOptions(trace: trace))
            }
            let metadata = reply.metadata
            let reason = metadata.status.reasonPhrase
            print("HTTP \(metadata.status.code) \(reason)  (\(metadata.body.count) B\(metadata.format.map { " \($0)" } ?? ""), "
                  + "\(milliseconds(metadata.duration)), call \(metadata.callID))")
            if trace {
                for field in metadata.headerFields { print("\(field.name): \(RedactionPolicy().value(of: field))") }
                if let chain = metadata.trace {
                    print("-- chain")
                    print(chain)
                }
                print("--")
            }
            if raw, metadata.format == .protobuf {
                print(try ProtobufRawDecoder().text(metadata.body), terminator: "")
            } else {
                print(render(reply.value))
            }
        } catch {
            if trace, let chain = (error as? CourierError)?.trace {
                print("-- chain")
                print(chain)
            }
            throw fail(error, language: language)
        }
    }

    private func printTrace(_ metadata: ResponseMetadata) {
        guard trace else { return }
        for field in metadata.headerFields { print("\(field.name): \(RedactionPolicy().value(of: field))") }
        if let chain = metadata.trace {
            print("-- chain")
            print(chain)
        }
        print("--")
    }

    /// The transfer options, checked: `--form` values (files must exist), `--output`, `--resume`.
    func makeTransfer() throws -> (form: MultipartForm?, output: URL?) {
        if !form.isEmpty, data != nil || dataFile != nil {
            throw Arguments.usage("--form sends a multipart body: drop --data or --data-file")
        }
        if resume, output == nil {
            throw Arguments.usage("--resume continues an --output download: give --output FILE")
        }
        var outputURL: URL?
        if let output {
            guard !output.isEmpty, !output.hasSuffix("/") else {
                throw Arguments.usage("--output needs a file path, not '\(output)'")
            }
            let url = URL(fileURLWithPath: output)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw Arguments.usage("--output \(output) is a directory; give a file path")
            }
            guard FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path) else {
                throw Arguments.usage("--output \(output): the folder \(url.deletingLastPathComponent().path) does not exist")
            }
            outputURL = url
        }
        guard !form.isEmpty else { return (nil, outputURL) }
        var multipart = MultipartForm()
        for item in form {
            let (name, value) = try Arguments.pair(item, option: "--form")
            guard let value else {
                throw Arguments.usage("--form takes name=value or name=@path: '\(item)' has no '='")
            }
            if value.hasPrefix("@") {
                let path = String(value.dropFirst())
                guard !path.isEmpty else { throw Arguments.usage("--form \(name)=@ needs a file path after '@'") }
                do {
                    try multipart.append(file: URL(fileURLWithPath: path), name: name)
                } catch let error as CourierError {
                    throw Arguments.usage("--form \(name)=@\(path): \(error.detail ?? "cannot read the file")")
                }
            } else {
                multipart.append(field: name, value)
            }
        }
        return (multipart, outputURL)
    }

    func makeCall() throws -> (CourierClient, Endpoint) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, scheme.hasPrefix("http"), parsed.host != nil else {
            throw CourierError(.invalidURL, detail: "'\(url)' is not an absolute http(s) URL")
        }
        guard let wireFormat = ContentFormat(name: format) else {
            throw CourierError(.invalidConfiguration, detail: "unknown format '\(format)' (json, xml, protobuf)")
        }
        let configuration = try config.map { try CLIConfiguration(path: $0) }
        let base = URL(string: "\(scheme)://\(parsed.host!)\(parsed.port.map { ":\($0)" } ?? "")")!
        var apiModule = try configuration?.module(named: module, for: url)
            ?? APIModule(name: "cli", service: APIService(name: "cli", baseURL: base))
        if configuration == nil || module == nil {
            // Calls go to the URL given, whatever the module's base URL.
            apiModule.service = APIService(name: apiModule.service.name, baseURL: base)
        }
        let methods: Set<String> = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
        guard methods.contains(method.uppercased()), let httpMethod = HTTPRequest.Method(method.uppercased()) else {
            throw CourierError(.invalidConfiguration,
                               detail: "unknown method '\(method)' (GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS)")
        }
        var endpoint = Endpoint(name: "send", module: apiModule, method: httpMethod, path: url)
        for item in query {
            let (name, value) = try Arguments.pair(item, option: "--query")
            endpoint.query.append(QueryItem(name, value))
        }
        for header in headers {
            let parts = try? Arguments.pair(header, separator: ":", option: "--header", valueRequired: true)
            guard let parts, let name = HTTPField.Name(parts.name), let value = parts.value else {
                throw Arguments.usage("a header is name:value with a valid field name, not '\(header)'")
            }
            endpoint.headers.append(HTTPField(name: name, value: value))
        }
        endpoint.requestFormat = wireFormat
        // Ask for --format, but decode whatever the server declares it sent (its Content-Type).
        if endpoint.headers[.accept] == nil { endpoint.headers[.accept] = wireFormat.mediaType }
        endpoint.responseFormat = nil
        endpoint.requestMessage = message
        endpoint.responseMessage = message
        if let timeout { endpoint.timeout = try Arguments.seconds(timeout, option: "--timeout") }
        if let data {
            endpoint.body = try JSONCodec().decode(Data(data.utf8), hints: CodingHints())
        } else if let dataFile {
            endpoint.rawBody = try Arguments.read(dataFile, limit: Arguments.inputLimit, what: "the --data-file \(dataFile)")
        }
        if raw, schema != nil {
            throw CourierError(.invalidConfiguration, detail: "--raw decodes without a schema: drop --schema or --raw")
        }
        var codecs = try CLICodecs.make(schemaPath: schema)
        if raw { codecs.register(RawProtobufCodec()) }
        let client = CourierClient(configuration: .init(interceptors: configuration?.globalInterceptors ?? [], codecs: codecs))
        return (client, endpoint)
    }
}
