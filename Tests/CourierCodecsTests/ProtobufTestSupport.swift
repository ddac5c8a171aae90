import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

/// Paths and helpers shared by the protobuf suites.
enum ProtobufTestSupport {
    /// `pair` repeated `count` times.
    static func repeated(_ pair: [UInt8], _ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pair.count * count) { buffer, initialized in
            var i = 0
            for _ in 0..<count {
                for byte in pair {
                    buffer[i] = byte
                    i += 1
                }
            }
            initialized = i
        }
    }

    static let demo: ProtobufSchema = try! ProtobufSchema(contentsOf: Repository.schema("demo.pb"))
    static let kitchen: ProtobufSchema = try! ProtobufSchema(contentsOf: Repository.schema("kitchen_sink.pb"))

    static func hints(_ type: String) -> CodingHints {
        var hints = CodingHints()
        hints.messageType = type
        return hints
    }

    /// Whether protoc is installed (it is on the CI image; the cross-checks need it).
    static var hasProtoc: Bool { findProtoc() != nil }

    static func findProtoc() -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(dir)/protoc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs protoc with `arguments`, feeding `input` on stdin; returns stdout.
    static func protoc(_ arguments: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(findProtoc()))
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root.appendingPathComponent("Schemas")
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Write on another thread so a large output cannot dead-lock the pipes.
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Issue.record("protoc \(arguments) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return output
    }
}
