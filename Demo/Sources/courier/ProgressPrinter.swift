import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shows a transfer's progress on standard error while its call runs: a bar redrawn in place on a terminal,
/// plain lines (one every 10 %, or every 8 MiB when the size is unknown) otherwise.
///
/// ```swift
/// let reply = try await ProgressPrinter.follow(client.upload(endpoint, form: form))
/// ```
enum ProgressPrinter {
    /// Awaits `call`'s reply, printing its progress meanwhile.
    static func follow<T: Sendable>(_ call: Call<T>) async throws -> Reply<T> {
        let terminal = isatty(STDERR_FILENO) == 1
        // Subscribed here, not in the task: a task that starts late would see only the latest report.
        let updates = call.progress
        let printer = Task {
            var lastStep: [TransferProgress.Direction: Int64] = [:]
            var drew = false
            for await progress in updates {
                if terminal {
                    FileHandle.standardError.write(Data(("\r" + bar(progress)).utf8))
                    drew = true
                } else {
                    let step = progress.fraction.map { Int64($0 * 10) } ?? progress.completed / (8 << 20)
                    guard step != lastStep[progress.direction] else { continue }
                    lastStep[progress.direction] = step
                    FileHandle.standardError.write(Data((line(progress) + "\n").utf8))
                }
            }
            if drew { FileHandle.standardError.write(Data("\n".utf8)) }
        }
        do {
            let reply = try await call.reply
            await printer.value
            return reply
        } catch {
            await printer.value
            throw error
        }
    }

    /// `upload   [#########...........]  45%  90.0 MiB / 200.0 MiB`.
    static func bar(_ progress: TransferProgress) -> String {
        let width = 30
        let label = progress.direction == .upload ? "upload  " : "download"
        guard let fraction = progress.fraction else { return "\(label) \(size(progress.completed))" }
        let filled = Int(fraction * Double(width))
        return "\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] \(percent(fraction)) \(size(progress.completed)) / \(size(progress.total ?? 0))"
    }

    /// `download 40% (83886080 of 209715200 bytes)`.
    static func line(_ progress: TransferProgress) -> String {
        let label = progress.direction == .upload ? "upload" : "download"
        guard let fraction = progress.fraction, let total = progress.total else {
            return "\(label) \(progress.completed) bytes"
        }
        return "\(label) \(Int(fraction * 100))% (\(progress.completed) of \(total) bytes)"
    }

    private static func percent(_ fraction: Double) -> String {
        let value = Int(fraction * 100)
        return String(repeating: " ", count: max(0, 3 - String(value).count)) + "\(value)%"
    }

    private static func size(_ bytes: Int64) -> String {
        if bytes < 1 << 20 { return "\(bytes) B" }
        let mebibytes = Double(bytes) / Double(1 << 20)
        return String(format: "%.1f MiB", mebibytes)
    }
}
