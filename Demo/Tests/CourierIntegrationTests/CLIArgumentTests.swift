import CourierDemoServer
import Foundation
import Testing

/// The `courier` tool refuses every malformed option value with a readable usage error and exit status 18
/// (never a trap), and stops reading an input at its limit (standard input fed by an endless generator, an
/// endless file) with `sizeLimitExceeded`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CLIArgumentTests {
    /// A URL nothing is sent to: every case fails before the call.
    static let url = "http://127.0.0.1:9/users/1"

    /// Bad arguments and a phrase their message must contain.
    static let badArguments: [([String], String)] = [
        (["send", "GET", url, "--query", ""], "--query takes name=value, not an empty value"),
        (["send", "GET", url, "--query", "="], "'=' has no name"),
        (["send", "GET", url, "--query", "=value"], "'=value' has no name"),
        (["send", "GET", url, "--query", "page=1", "--query", ""], "--query takes name=value"),
        (["send", "GET", url, "-H", ""], "a header is name:value"),
        (["send", "GET", url, "-H", ":"], "a header is name:value"),
        (["send", "GET", url, "-H", ":value"], "a header is name:value"),
        (["send", "GET", url, "-H", "no colon here"], "a header is name:value"),
        (["send", "GET", url, "--timeout", "1e20"], "--timeout must be at most 86400 seconds, not '1e20'"),
        (["send", "GET", url, "--timeout", "1e400"], "--timeout must be at most 86400 seconds"),
        (["send", "GET", url, "--timeout", "nan"], "--timeout takes a number of seconds, not 'nan'"),
        (["send", "GET", url, "--timeout", "inf"], "--timeout takes a number of seconds, not 'inf'"),
        (["send", "GET", url, "--timeout", "infinity"], "--timeout takes a number of seconds"),
        (["send", "GET", url, "--timeout=-1"], "--timeout must be more than 0 seconds, not '-1'"),
        (["send", "GET", url, "--timeout", "0"], "--timeout must be more than 0 seconds"),
        (["send", "GET", url, "--timeout", ""], "--timeout needs a number of seconds, not an empty value"),
        (["send", "GET", url, "--timeout", "ten"], "--timeout takes a number of seconds, not 'ten'"),
        (["send", "GET", url, "--timeout", "0x10"], "--timeout takes a number of seconds"),
        (["send", "GET", url, "--timeout"], "Missing value for '--timeout"),
        (["send", "GET", url, "--no-such-option"], "Unknown option '--no-such-option'"),
        (["send", "GET", "http://127.0.0.1:99999/x"], "names the port 99999, outside 0–65535"),
        (["serve", "--port", "70000"], "--port must be between 0 and 65535, not '70000'"),
        (["serve", "--port=-1"], "--port must be between 0 and 65535, not '-1'"),
        (["serve", "--port", "99999999999999999999999"], "--port must be between 0 and 65535"),
        (["serve", "--port", "1e20"], "--port takes a whole number, not '1e20'"),
        (["serve", "--port", "http"], "--port takes a whole number, not 'http'"),
        (["serve", "--port", ""], "--port needs a whole number"),
        (["send", "POST", url, "--form", ""], "--form takes name=value, not an empty value"),
        (["send", "POST", url, "--form", "title"], "--form takes name=value or name=@path: 'title' has no '='"),
        (["send", "POST", url, "--form", "=x"], "'=x' has no name"),
        (["send", "POST", url, "--form", "photo=@"], "--form photo=@ needs a file path after '@'"),
        (["send", "POST", url, "--form", "photo=@/no/such/file.jpg"], "--form photo=@/no/such/file.jpg: cannot read /no/such/file.jpg"),
        (["send", "POST", url, "--form", "a=b", "--data", "{}"], "--form sends a multipart body: drop --data or --data-file"),
        (["send", "GET", url, "--resume"], "--resume continues an --output download: give --output FILE"),
        (["send", "GET", url, "--output", ""], "--output needs a file path, not ''"),
        (["send", "GET", url, "--output", "/tmp"], "--output /tmp is a directory"),
        (["send", "GET", url, "--output", "/no/such/folder/file.bin"], "the folder /no/such/folder does not exist"),
    ]

    @Test(arguments: badArguments)
    func aMalformedValueIsAUsageErrorWithExitStatus18(arguments: [String], message: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 18, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(arguments): \(result.stderr)")
    }

    /// Runs `courier arguments` with its standard input fed by a generator process that writes spaces
    /// forever, and returns the tool's result once it has stopped (the generator then ends on a broken pipe).
    func runFedByAGenerator(_ arguments: [String]) throws -> CLI.Result {
        let generator = Process()
        generator.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        generator.arguments = ["python3", "-c", """
            import sys
            block = b" " * (1 << 20)
            try:
                while True:
                    sys.stdout.buffer.write(block)
            except (BrokenPipeError, OSError):
                pass
            """]
        let pipe = Pipe()
        generator.standardOutput = pipe
        let tool = Process()
        tool.executableURL = CLI.binary
        tool.arguments = arguments
        tool.standardInput = pipe
        let out = Pipe()
        let err = Pipe()
        tool.standardOutput = out
        tool.standardError = err
        try generator.run()
        try tool.run()
        // Only the two processes hold the pipe now.
        try pipe.fileHandleForReading.close()
        try pipe.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        tool.waitUntilExit()
        generator.terminate()
        generator.waitUntilExit()
        return CLI.Result(status: tool.terminationStatus, output: stdout, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test(arguments: [
        ["decode", "--format", "json"],
        ["convert", "--from", "json", "--to", "xml"],
        ["validate", "--schema", "\(CLITests.root)/Schemas/user.schema.json", "-"],
    ])
    func anEndlessStandardInputStopsAtItsLimit(arguments: [String]) throws {
        let result = try runFedByAGenerator(arguments)
        #expect(result.status == 12, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("[decoding.sizeLimitExceeded 3006]"), "\(result.stderr)")
        #expect(result.stderr.contains("standard input is larger than the limit of 134217728 bytes"), "\(result.stderr)")
    }

    @Test func endlessFilesStopAtTheirLimits() throws {
        let data = try CLI.run(["send", "POST", Self.url, "--data-file", "/dev/zero"])
        #expect(data.status == 12, "\(data.stderr)")
        #expect(data.stderr.contains("the --data-file /dev/zero is larger than the limit of 134217728 bytes"), "\(data.stderr)")
        let config = try CLI.run(["send", "GET", Self.url, "--config", "/dev/zero"])
        #expect(config.status == 12, "\(config.stderr)")
        #expect(config.stderr.contains("the configuration file /dev/zero is larger than the limit of 16777216 bytes"),
                "\(config.stderr)")
        let decode = try CLI.run(["decode", "--format", "json", "/dev/zero"])
        #expect(decode.status == 12, "\(decode.stderr)")
        #expect(decode.stderr.contains("[decoding.sizeLimitExceeded 3006]"), "\(decode.stderr)")
    }

    /// `courier send --timeout` is a deadline for the whole exchange: a trickling body and a redirect whose
    /// body never ends both end the tool with `timedOut` (status 10), and the tool exits.
    @Test(arguments: ["/trickle", "/redirect-endless"])
    func theTimeoutEndsTheToolWhateverTheServerSends(path: String) async throws {
        try await HostileServer.with { server in
            let result = try CLI.run(["send", "GET", "\(server.baseURL)\(path)", "--timeout", "1"])
            #expect(result.status == 10, "\(result.stderr)")
            #expect(result.stderr.contains("[transport.timedOut 1001]"), "\(result.stderr)")
        }
    }

    @Test func wellFormedValuesStillWork() async throws {
        try await withDemoServer { server, _ in
            let result = try CLI.run(["send", "GET", "\(server.baseURL)/echo", "--timeout", "5", "--query", "flag",
                                      "--query", "q=a=b", "--query", "empty=", "-H", "X-Probe: a:b"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("\"q\": \"a=b\""), "\(result.stdout)")
            #expect(result.stdout.contains("\"x-probe\": \"a:b\""), "\(result.stdout)")
        }
    }
}
