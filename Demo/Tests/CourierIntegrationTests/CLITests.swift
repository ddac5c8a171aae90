import Courier
import CourierResilience
import CourierDemoServer
import Foundation
import Testing

/// Runs the built `courier` tool.
struct CLI {
    static let binary: URL = {
        // Beside the test bundle (the Demo package's build folder, whatever its scratch path), else the
        // Demo package's default build folder.
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("courier")
        let root = Repository.root.appendingPathComponent("Demo")
        let candidates = [beside] + [".build/debug/courier", ".build/x86_64-unknown-linux-gnu/debug/courier",
                                     ".build/aarch64-unknown-linux-gnu/debug/courier"].map { root.appendingPathComponent($0) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]
    }()

    struct Result {
        var status: Int32
        var output: Data
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: stdoutData, stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: stderrData, as: UTF8.self))
    }
}

@Suite(.serialized) struct CLITests {
    @Test func sendShowsStatusHeadersTraceAndTheDecodedBody() async throws {
        try await withDemoServer { server, _ in
            let result = try CLI.run(["send", "GET", "\(server.baseURL)/users/1", "--trace"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("HTTP 200 OK"))
            #expect(result.stdout.lowercased().contains("content-type: application/json"))
            #expect(result.stdout.contains("-- chain"))
            #expect(result.stdout.contains("codec"))
            #expect(result.stdout.contains("errorMapping"))
            #expect(result.stdout.contains("\"name\": \"Zoë Hernández\""))
        }
    }

    @Test func sendPostsJSONData() async throws {
        try await withDemoServer { server, _ in
            let result = try CLI.run(["send", "POST", "\(server.baseURL)/users", "--data",
                                      #"{"name":"Ada Lovelace","email":"ada@example.com","age":36}"#])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("HTTP 201"))
            #expect(result.stdout.contains("\"name\": \"Ada Lovelace\""))
        }
    }

    @Test func sendSpeaksEveryFormatWithHeadersQueryAndFiles() async throws {
        try await withDemoServer { server, _ in
            let proto = "\(Self.root)/Schemas/demo.proto"
            let xml = try CLI.run(["send", "GET", "\(server.baseURL)/users/1", "--format", "xml"])
            #expect(xml.status == 0, "\(xml.stderr)")
            #expect(xml.stdout.contains(" B xml, "))
            #expect(xml.stdout.contains("\"name\": \"Zoë Hernández\""))

            let typed = try CLI.run(["send", "GET", "\(server.baseURL)/users/1", "--format", "protobuf",
                                     "--schema", proto, "--message", "demo.UserResponse"])
            #expect(typed.status == 0, "\(typed.stderr)")
            #expect(typed.stdout.contains(" B protobuf, "))
            #expect(typed.stdout.contains("\"name\": \"Zoë Hernández\""))

            // Without a schema: field numbers and wire values, as protoc --decode_raw prints them.
            let raw = try CLI.run(["send", "GET", "\(server.baseURL)/users/1", "--format", "protobuf", "--raw"])
            #expect(raw.status == 0, "\(raw.stderr)")
            #expect(raw.stdout.contains("\n1: 200\n2: \"OK\"\n3 {\n  1: 1\n  2: \"Zo\\303\\253 Hern\\303\\241ndez\"\n"),
                    "\(raw.stdout)")

            let echoed = try CLI.run(["send", "GET", "\(server.baseURL)/echo", "-H", "X-Trace-Id: abc 123",
                                      "--query", "page=2", "--query", "q=a b"])
            #expect(echoed.status == 0, "\(echoed.stderr)")
            #expect(echoed.stdout.contains("\"x-trace-id\": \"abc 123\""))
            #expect(echoed.stdout.contains("\"page\": \"2\""))
            #expect(echoed.stdout.contains("\"q\": \"a b\""))

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).bin")
            try Data("exact bytes\u{0}\u{1}".utf8).write(to: file)
            let sent = try CLI.run(["send", "PUT", "\(server.baseURL)/echo", "--data-file", file.path])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout.contains("\"bodyBytes\": 13"))
            #expect(sent.stdout.contains("\"method\": \"PUT\""))

            let method = try CLI.run(["send", "FETCH", "\(server.baseURL)/users/1"])
            #expect(method.status == 18)
            #expect(method.stderr.contains("unknown method 'FETCH'"))
            let header = try CLI.run(["send", "GET", "\(server.baseURL)/users/1", "-H", "no-colon"])
            #expect(header.status == 18)
            #expect(header.stderr.contains("a header is name:value"))
        }
    }

    @Test func timeoutRefusedAnd404EachHaveTheirOwnErrorAndExitStatus() async throws {
        try await withDemoServer { server, _ in
            let timeout = try CLI.run(["send", "GET", "\(server.baseURL)/delay/60000", "--timeout", "0.3"])
            #expect(timeout.status == 10)
            #expect(timeout.stderr.contains("[transport.timedOut 1001] The request timed out."))

            let notFound = try CLI.run(["send", "GET", "\(server.baseURL)/nope", "--language", "zh"])
            #expect(notFound.status == 11)
            #expect(notFound.stderr.contains("[http.notFound 2404]"))
            #expect(notFound.stderr.contains("请求的资源不存在（404）~"))

            let business = try CLI.run(["send", "GET", "\(server.baseURL)/users/404404", "--config", try configFile(server)])
            #expect(business.status == 16)
            #expect(business.stderr.contains("[business.business 7001]"))
            #expect(business.stderr.contains("user 404404 does not exist"))
        }
        let closed = try ClosedPort()
        let refused = try CLI.run(["send", "GET", "\(closed.baseURL)/users/1"])
        #expect(refused.status == 10)
        #expect(refused.stderr.contains("[transport.cannotConnect 1002] Could not connect to the server."))
        withExtendedLifetime(closed) {}
    }

    @Test func configFilesLoadModulesAndTheirInterceptors() async throws {
        try await withDemoServer { server, _ in
            let result = try CLI.run(["send", "GET", "\(server.baseURL)/echo", "--config", try configFile(server), "--trace"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("\"x-platform\": \"linux\""))
            #expect(result.stdout.contains("\"x-app\": \"demo\""))
            #expect(result.stdout.contains("RequestID"))
            let bad = try CLI.run(["send", "GET", "\(server.baseURL)/echo", "--config", "/nonexistent/courier.json"])
            #expect(bad.status == 18)
        }
    }

    @Test func sendTracesShowSecretHeaderValuesAsTheOnePlaceholder() async throws {
        try await withDemoServer { server, _ in
            let json = """
                {"interceptors": [{"type": "headers", "headers": {"X-Session-Token": "s3ss10n", "X-Platform": "linux"}}]}
                """
            let config = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).json")
            try Data(json.utf8).write(to: config)
            defer { try? FileManager.default.removeItem(at: config) }
            let result = try CLI.run(["send", "GET", "\(server.baseURL)/echo", "--config", config.path, "--trace"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("+header X-Session-Token: REDACTED"))
            #expect(result.stdout.contains("+header X-Platform: linux"))
            #expect(!result.stdout.contains("X-Session-Token: s3ss10n"))
        }
    }

    @Test func helpDocumentsEverySubcommand() throws {
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        for command in ["demo", "send", "convert", "decode", "validate", "serve"] {
            #expect(help.stdout.contains(command))
            let sub = try CLI.run([command, "--help"])
            #expect(sub.status == 0, "\(command)")
            #expect(sub.stdout.contains("USAGE"), "\(command)")
        }
    }

    @Test func theDemoTourRunsEveryStepAndExitsZero() throws {
        let result = try CLI.run(["demo"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for step in ["A typed call", "decoded raw", "A business error", "An HTTP error", "A timeout", "A cancelled call",
                     "The same call in every wire format", "A response rejected by its JSON Schema",
                     "Signed and encrypted round trips", "A tampered answer", "Re-login, then replay", "A cached answer",
                     "Stale-while-revalidate", "A batch", "A chain",
                     "An authenticated, signed upload", "An interrupted download, resumed"] {
            #expect(result.stdout.contains(step), "missing step: \(step)")
        }
        // What each step must show: the chain's stages, the readable errors, each format, the cache's answers.
        for line in ["[business.business 7001] The user does not exist.", "[http.notFound 2404]",
                     "[transport.timedOut 1001] The request timed out.", "[cancelled.cancelled 8001]",
                     "(json body)", "(xml body)", "(protobuf body)",
                     "[validation.schemaViolation 5001]", "data/age: -1 is less than the minimum of 0",
                     "decrypted and verified json", "decrypted and verified xml", "decrypted and verified protobuf",
                     "[security.signatureInvalid 6002]", "from cache in", "background update delivered",
                     "batch member 2 of 3 (/status/404) failed", "finished 0", "the second step fetched user 3",
                     "│ 2. RequestID", "+header X-Request-ID", "│ 5. errorMapping",
                     "sign-in screen shown once", "5 calls replayed after 1 sign-in: ada, ada, ada, ada, ada",
                     "the server checked app_id, the bearer token and the signed SHA-256", "matches",
                     "[transport.connectionLost 1005]", "byte-identical to the server's"] {
            #expect(result.stdout.contains(line), "missing: \(line)")
        }
        #expect(!result.stdout.contains("X-Courier-Key-Id: demo"), "the key id header must be redacted in traces")
        #expect(result.stdout.contains("Tour complete"))
    }

    @Test func sendFormStreamsAMultipartBodyWithProgressLines() async throws {
        try await withDemoServer { server, _ in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let photo = folder.appendingPathComponent("photo.bin")
            try Data(DownloadPattern.bytes(at: 0, count: 2 << 20)).write(to: photo)
            let result = try CLI.run(["send", "POST", "\(server.baseURL)/echo", "--form", "title=Holiday",
                                      "--form", "photo=@\(photo.path)"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("HTTP 200 OK"))
            #expect(result.stdout.contains("multipart/form-data; boundary=courier-"))
            #expect(result.stdout.contains("name=\\\"photo\\\"; filename=\\\"photo.bin\\\""))
            // Not a terminal: plain progress lines, one per 10 % step reached, rising to 100 %. (The first
            // report the CLI sees may already be past 0 % when the machine is busy.)
            #expect(!result.stderr.contains("\r"))
            let percents = result.stderr.split(separator: "\n").compactMap { line -> Int? in
                guard line.hasPrefix("upload "), line.hasSuffix(" of 2097467 bytes)") else { return nil }
                return Int(line.dropFirst("upload ".count).prefix { $0.isNumber })
            }
            #expect(percents.count >= 5, "\(result.stderr)")
            #expect(percents == percents.sorted() && Set(percents).count == percents.count, "\(result.stderr)")
            #expect(percents.last == 100, "\(result.stderr)")
        }
    }

    @Test func sendOutputResumesAnInterruptedDownload() async throws {
        try await withDemoServer { server, _ in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("big.bin")
            let size = 6 << 20
            let url = "\(server.baseURL)/cache/download?size=\(size)&drop=\(2 << 20)&key=cli-resume"
            let first = try CLI.run(["send", "GET", url, "--output", file.path])
            #expect(first.status == 10, "\(first.stdout) \(first.stderr)")
            #expect(first.stderr.contains("transport.connectionLost"))
            let partial = file.path + ".part"
            let kept = (try FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0
            #expect(kept > 0)
            let second = try CLI.run(["send", "GET", url, "--output", file.path, "--resume"])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains("saved \(size) B to \(file.path), resumed from \(kept) B"))
            #expect(second.stderr.contains("download 100% (\(size) of \(size) bytes)"))
            #expect(try Data(contentsOf: file) == Data(DownloadPattern.bytes(at: 0, count: size)))
            // An error answer is printed as an error, not saved.
            let missing = try CLI.run(["send", "GET", "\(server.baseURL)/status/404", "--output", folder.appendingPathComponent("x").path])
            #expect(missing.status == 11)
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("x").path))
        }
    }

    static let root = Repository.root.path

    @Test(arguments: ["users_10.json", "users_10.xml", "users_5000.json"])
    func validateAcceptsTheFixtures(file: String) throws {
        let result = try CLI.run(["validate", "--schema", "\(Self.root)/Schemas/userlist.schema.json", "\(Self.root)/Fixtures/\(file)"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout == "valid\n")
    }

    @Test func validatePrintsEachViolationAndExitsOne() throws {
        let document = #"{"code":200,"message":"OK","data":{"id":7,"name":"Ada","email":"a@x.io","age":-1,"address":{"zip":"ABCDE"}}}"#
        let result = try CLI.run(["validate", "--schema", "\(Self.root)/Schemas/user.schema.json", "--pointer", "#/$defs/response", "-"],
                                 stdin: Data(document.utf8))
        #expect(result.status == 1)
        #expect(result.stdout.contains("data/age: -1 is less than the minimum of 0"))
        #expect(result.stdout.contains(#"data/address/zip: "ABCDE" does not match the pattern ^[0-9]{5}$"#))
        #expect(result.stdout.contains("2 violations"))
        let broken = try CLI.run(["validate", "--schema", "\(Self.root)/Schemas/user.schema.json", "-"], stdin: Data("{".utf8))
        #expect(broken.status == 12)
        #expect(broken.stderr.contains("[decoding.malformedInput 3001]"))
    }

    @Test func validateReadsXMLAndProtobufDocuments() throws {
        let document = #"{"code":200,"message":"OK","data":{"id":7,"name":"Ada","email":"a@x.io","age":-1,"score":1.5,"active":true,"tags":["x"],"address":{"city":"Paris","street":"1 Rue","zip":"ABCDE"}}}"#
        let proto = ["--schema", "\(Self.root)/Schemas/demo.proto", "--message", "demo.UserResponse"]
        let schema = ["--schema", "\(Self.root)/Schemas/user.schema.json", "--pointer", "#/$defs/response"]
        let pb = try CLI.run(["convert", "--from", "json", "--to", "protobuf"] + proto, stdin: Data(document.utf8))
        #expect(pb.status == 0, "\(pb.stderr)")
        let xml = try CLI.run(["convert", "--from", "json", "--to", "xml", "--root", "response"], stdin: Data(document.utf8))
        #expect(xml.status == 0, "\(xml.stderr)")
        let inputs: [(String, Data, [String])] = [
            ("protobuf", pb.output, ["--proto", "\(Self.root)/Schemas/demo.proto", "--message", "demo.UserResponse"]),
            ("xml", xml.output, []),
        ]
        for (format, data, extra) in inputs {
            let result = try CLI.run(["validate"] + schema + ["--format", format] + extra + ["-"], stdin: data)
            #expect(result.status == 1, "\(format): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("data/age: -1 is less than the minimum of 0"), "\(format)")
            #expect(result.stdout.contains(#"data/address/zip: "ABCDE" does not match the pattern ^[0-9]{5}$"#), "\(format)")
            #expect(result.stdout.contains("2 violations"), "\(format)")
        }
        let valid = try CLI.run(["validate", "--schema", "\(Self.root)/Schemas/userlist.schema.json", "--format", "protobuf",
                                 "--proto", "\(Self.root)/Schemas/demo.pb", "--message", "demo.UserListResponse",
                                 "\(Self.root)/Fixtures/users_10.pb"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        #expect(valid.stdout == "valid\n")
        let garbage = try CLI.run(["convert", "--from", "xml", "--to", "json"], stdin: Data("<a><b></a>".utf8))
        #expect(garbage.status == 12)
        #expect(garbage.stderr.contains("[decoding.malformedInput 3001]"))
    }

    @Test func convertBetweenEveryPairOfFormatsReproducesTheFixtures() throws {
        let schema = ["--schema", "\(Self.root)/Schemas/demo.proto", "--message", "demo.UserListResponse"]
        let fixtures: [String: Data] = try ["json": "json", "xml": "xml", "protobuf": "pb"].mapValues {
            try Data(contentsOf: URL(fileURLWithPath: "\(Self.root)/Fixtures/users_10.\($0)"))
        }
        for (from, input) in fixtures {
            for to in fixtures.keys where to != from {
                let result = try CLI.run(["convert", "--from", from, "--to", to] + schema, stdin: input)
                #expect(result.status == 0, "\(from) → \(to): \(result.stderr)")
                var expected = fixtures[to]!
                if to != "protobuf" { expected.append(contentsOf: Array("\n".utf8)) }
                if to == "xml" { expected = Data(String(decoding: expected, as: UTF8.self).replacingOccurrences(of: "\n<response>", with: "<response>").utf8) }
                #expect(result.output == expected || to == "xml" && result.stdout.contains("<users><user><id>1000000000000</id>"),
                        "\(from) → \(to) differs from the fixture")
            }
        }
    }

    @Test func decodeRawMatchesProtocDecodeRawAndBadInputFails() throws {
        let input = try Data(contentsOf: URL(fileURLWithPath: "\(Self.root)/Fixtures/users_10.pb"))
        let raw = try CLI.run(["decode", "--format", "protobuf", "--raw"], stdin: input)
        #expect(raw.status == 0)
        #expect(raw.stdout.hasPrefix("1: 200\n2: \"OK\"\n3 {\n"))
        let typed = try CLI.run(["decode", "--format", "protobuf", "--schema", "\(Self.root)/Schemas/demo.pb",
                                 "--message", "demo.UserListResponse"], stdin: input)
        #expect(typed.status == 0)
        #expect(typed.stdout.contains("\"name\": \"Zoë Hernández\""))
        let bad = try CLI.run(["decode", "--format", "protobuf", "--schema", "\(Self.root)/Schemas/demo.pb",
                               "--message", "demo.UserListResponse"], stdin: Data("garbage\n".utf8))
        #expect(bad.status == 12)
        #expect(bad.stderr.contains("[decoding.malformedInput 3001]"))
        let unknown = try CLI.run(["decode", "--format", "protobuf", "--schema", "\(Self.root)/Schemas/demo.pb",
                                   "--message", "demo.Nope"], stdin: input)
        #expect(unknown.status == 12)
        #expect(unknown.stderr.contains("unknownMessageType"))
    }

    func configFile(_ server: DemoServer) throws -> String {
        let json = """
            {"modules": [{"name": "user", "baseURL": "\(server.baseURL)", "headers": {"X-App": "demo"},
              "interceptors": [{"type": "requestID"}, {"type": "headers", "headers": {"X-Platform": "linux"}}],
              "businessRule": {"codePath": "code", "messagePath": "message", "successCodes": [0, 200]}}]}
            """
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: path)
        return path.path
    }
}
