import Foundation

/// Runs `protoc` to compile a `.proto` file into a descriptor set.
enum ProtocRunner {
    static func compile(_ url: URL) throws -> Data {
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: url.path) else {
            throw CourierError(.invalidConfiguration, detail: "no such .proto file: \(url.path)")
        }
        guard let protoc = findProtoc() else {
            throw CourierError(
                .invalidConfiguration,
                detail: "protoc was not found on PATH (install protobuf-compiler, or set PROTOC) to compile \(url.lastPathComponent)"
            )
        }
        let output = fileManager.temporaryDirectory
            .appendingPathComponent("courier-\(UInt64.random(in: 0...UInt64.max)).pb")
        defer { try? fileManager.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: protoc)
        process.arguments = [
            "--descriptor_set_out=\(output.path)", "--include_imports",
            "-I\(url.deletingLastPathComponent().path)", url.path,
        ]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = Pipe()
        do {
            try process.run()
        } catch {
            throw CourierError(.invalidConfiguration, detail: "could not run \(protoc)", underlying: error)
        }
        let message = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw CourierError(
                .invalidConfiguration,
                detail: "protoc failed to compile \(url.lastPathComponent): \(text.isEmpty ? "exit status \(process.terminationStatus)" : text)"
            )
        }
        do {
            return try Data(contentsOf: output)
        } catch {
            throw CourierError(.invalidConfiguration, detail: "protoc wrote no descriptor set", underlying: error)
        }
    }

    static func findProtoc() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["PROTOC"], FileManager.default.isExecutableFile(atPath: explicit) {
            return explicit
        }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = String(directory) + "/protoc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
