import Foundation

/// Runs a Python test server: writes `source` to `folder` as `name`, starts it with `arguments`, reads the
/// port it prints on its first line, runs `body` with it, and stops the process (closing its stdin, then
/// terminating it) whatever `body` does.
func withPythonServer<T>(
    source: String, named name: String, in folder: URL, arguments: [String] = [],
    _ body: (Int) async throws -> T
) async throws -> T {
    let script = folder.appendingPathComponent(name)
    try Data(source.utf8).write(to: script)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path] + arguments
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
        stop()
        throw HostileServerError(message: "\(name) did not start: '\(String(decoding: line, as: UTF8.self))'")
    }
    do {
        let result = try await body(port)
        stop()
        return result
    } catch {
        stop()
        throw error
    }
}
