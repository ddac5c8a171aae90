import Foundation

/// A small benchmark harness: runs an operation repeatedly, takes the median of several rounds and
/// reports time per operation, throughput and the ratio against a peer measured in the same run.
struct Harness {
    struct Result {
        var name: String
        var nanosPerOp: Double
        var bytes: Int
        var megabytesPerSecond: Double { bytes == 0 ? 0 : Double(bytes) / nanosPerOp * 1e9 / 1e6 }
    }

    var rounds = 5
    var minimumRoundTime: Duration = .milliseconds(200)
    private(set) var results: [Result] = []

    /// Measures `body`; `bytes` is the input (decode) or output (encode) size for MB/s.
    @discardableResult
    mutating func measure(_ name: String, bytes: Int = 0, _ body: () throws -> Void) rethrows -> Result {
        let clock = ContinuousClock()
        // Calibrate: how many iterations fill a round.
        var iterations = 1
        while true {
            let elapsed = try clock.measure { for _ in 0..<iterations { try body() } }
            if elapsed >= minimumRoundTime || iterations >= 1 << 24 { break }
            iterations *= 2
        }
        var samples: [Double] = []
        for _ in 0..<rounds {
            let elapsed = try clock.measure { for _ in 0..<iterations { try body() } }
            samples.append(Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9)
        }
        samples.sort()
        let result = Result(name: name, nanosPerOp: samples[samples.count / 2] / Double(iterations), bytes: bytes)
        results.append(result)
        print(String(format: "  %-58@ %12.2f µs/op %10.1f MB/s", name as NSString, result.nanosPerOp / 1000,
                     result.megabytesPerSecond))
        return result
    }

    /// Measures an async operation the same way.
    @discardableResult
    mutating func measureAsync(_ name: String, bytes: Int = 0, _ body: () async throws -> Void) async rethrows -> Result {
        let clock = ContinuousClock()
        var iterations = 1
        while true {
            let start = clock.now
            for _ in 0..<iterations { try await body() }
            if clock.now - start >= minimumRoundTime || iterations >= 1 << 24 { break }
            iterations *= 2
        }
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = clock.now
            for _ in 0..<iterations { try await body() }
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9)
        }
        samples.sort()
        let result = Result(name: name, nanosPerOp: samples[samples.count / 2] / Double(iterations), bytes: bytes)
        results.append(result)
        print(String(format: "  %-58@ %12.2f µs/op %10.1f MB/s", name as NSString, result.nanosPerOp / 1000,
                     result.megabytesPerSecond))
        return result
    }

    /// Prints `ours` against `peer` as a ratio of speed (how many times faster ours is) and the target.
    func compare(_ ours: Result, _ peer: Result, target: Double? = nil) {
        let ratio = peer.nanosPerOp / ours.nanosPerOp
        var line = String(format: "  => %@ vs %@: %.2f× ", ours.name as NSString, peer.name as NSString, ratio)
        if let target { line += String(format: "(target ≥ %.1f×: %@)", target, ratio >= target ? "met" : "MISSED") }
        print(line)
    }
}

/// Reads a fixture from the repository's Fixtures/ folder.
func fixture(_ name: String) -> Data {
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let url = root.appendingPathComponent("Fixtures").appendingPathComponent(name)
    guard let data = try? Data(contentsOf: url) else { fatalError("missing fixture \(url.path)") }
    return data
}

/// Peak resident memory of this process so far, in MiB (from /proc/self/status VmHWM).
func peakMemoryMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kb / 1024
    }
    return 0
}
