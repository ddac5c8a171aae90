import Benchmark
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What every benchmark group shares: the repository's fixtures, the measuring configurations, peak-memory
/// readings and the notes the table script prints beside a benchmark (a hostile input's outcome, say).
///
/// Benchmark names follow `<measure> <size> <side>` (e.g. `json.decode.model 5000 Courier`), which is how
/// `Scripts/bench-table.py` pairs Courier with its peer: keep to it when adding one.
public enum BenchmarkSupport {
    /// The repository's root (this package's parent directory).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The bytes of `Fixtures/<name>`; stops the benchmark when the fixture is missing.
    public static func fixture(_ name: String) -> Data {
        let url = root.appendingPathComponent("Fixtures").appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { fatalError("missing fixture \(url.path)") }
        return data
    }

    /// Time (wall clock, nanoseconds, one operation per iteration), mallocs and throughput, for at most
    /// `seconds` or `iterations`, whichever comes first.
    public static func timed(seconds: Int = 2, iterations: Int = 100_000) -> Benchmark.Configuration {
        .init(
            metrics: [.wallClock, .mallocCountTotal, .throughput],
            timeUnits: .nanoseconds,
            warmupIterations: 3,
            maxDuration: .seconds(seconds),
            maxIterations: iterations
        )
    }

    /// The custom metric of ``measurePeakMemory(_:_:)``: how far the process's peak resident memory rose above
    /// its resident size during one operation, in KiB.
    public static let peakMemoryGrowth = BenchmarkMetric.custom("Peak memory growth (KiB)", useScalingFactor: false)

    /// The configuration of a peak-memory benchmark: a few iterations, each reporting ``peakMemoryGrowth``.
    public static func memory(iterations: Int = 10) -> Benchmark.Configuration {
        .init(
            metrics: [.wallClock, .mallocCountTotal, .throughput, peakMemoryGrowth],
            timeUnits: .nanoseconds,
            warmupIterations: 1,
            maxDuration: .seconds(10),
            maxIterations: iterations
        )
    }

    /// Resets the kernel's peak-RSS mark (Linux: `5` into /proc/self/clear_refs), runs `body` once and records how
    /// far the peak rose above the resident size before it, as ``peakMemoryGrowth``. Only `body` is measured (time,
    /// mallocs): the readings of /proc around it are outside the benchmark's explicit start and stop.
    public static func measurePeakMemory(_ benchmark: Benchmark, _ body: () throws -> Void) rethrows {
        #if canImport(Glibc)
        // Hand freed heap back to the system (glibc's malloc_trim, not exported by the Glibc module) so the
        // baseline is what is really in use.
        if let symbol = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = statusKiB("VmRSS:")
        benchmark.startMeasurement()
        try body()
        benchmark.stopMeasurement()
        let peak = statusKiB("VmHWM:")
        benchmark.measurement(peakMemoryGrowth, max(0, peak - before))
    }

    /// A field of /proc/self/status in KiB (`VmRSS:`, `VmHWM:`), 0 where there is none.
    public static func statusKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        }
        return 0
    }

    /// Records a note for the benchmark `name` (printed by the table script after its figures) in the folder
    /// `$COURIER_BENCH_NOTES`, when that is set: one line, `name<TAB>note`.
    public static func note(_ name: String, _ text: String) {
        guard let folder = ProcessInfo.processInfo.environment["COURIER_BENCH_NOTES"], !folder.isEmpty else { return }
        let line = "\(name)\t\(text.replacingOccurrences(of: "\n", with: " "))\n"
        let url = URL(fileURLWithPath: folder).appendingPathComponent("notes.tsv")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if let handle = try? FileHandle(forWritingTo: url) {
            handle.seekToEndOfFile()
            handle.write(Data(line.utf8))
            try? handle.close()
        } else {
            try? Data(line.utf8).write(to: url)
        }
    }

    /// Stops the run when `ours` and the peer's answer disagree: a benchmark of a wrong answer is no benchmark.
    public static func check(_ agree: Bool, _ what: @autoclosure () -> String) {
        if !agree { fatalError("results disagree with the peer: \(what())") }
    }
}
