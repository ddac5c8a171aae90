public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import HTTPTypes

/// How far a download is.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes on disk so far (a resumed download starts from the bytes kept earlier).
    public var received: Int64
    /// The full size, when the server said.
    public var expected: Int64?

    /// `received / expected`, when the size is known.
    public var fraction: Double? {
        guard let expected, expected > 0 else { return nil }
        return Double(received) / Double(expected)
    }
}

/// A finished download.
public struct DownloadResult: Sendable {
    /// Where the file is.
    public var file: URL
    /// Its size in bytes.
    public var size: Int64
    /// How many attempts it took.
    public var attempts: Int
    /// How many bytes were kept from earlier attempts instead of being fetched again.
    public var resumedBytes: Int64
}

/// Downloads large files straight to disk with URLSession, reporting progress and resuming after a
/// failure: the bytes received so far stay in `<destination>.part` (with the response's `ETag` or
/// `Last-Modified` beside it in `<destination>.part.resume`), and the next attempt asks only for the rest with
/// `Range` (and `If-Range`, so a changed file starts over). The result is byte-identical to an uninterrupted
/// download; progress is monotonic and ends at 100 %.
///
/// This streams, so it lives beside the ``Courier/Transport`` (which answers whole bodies) rather than in it.
///
/// ```swift
/// let downloader = Downloader()
/// let result = try await downloader.download(
///     from: URL(string: "https://example.com/big.bin")!, to: destination, maximumAttempts: 5
/// ) { progress in print(progress.fraction ?? 0) }
/// ```
public final class Downloader: Sendable {
    /// Settings.
    public struct Options: Sendable {
        /// Header fields added to every request (authorization, ...).
        public var headerFields: HTTPFields
        /// How long a request may stay silent before it fails.
        public var idleTimeout: Duration
        /// The delay between attempts (the injected clock sleeps it).
        public var retryDelay: Duration

        /// No extra fields, 60 s idle timeout, 0.5 s between attempts.
        public init() {
            headerFields = [:]
            idleTimeout = .seconds(60)
            retryDelay = .milliseconds(500)
        }
    }

    /// The settings.
    public let options: Options
    private let clock: any Clock<Duration>

    /// A downloader.
    public init(options: Options = Options(), clock: any Clock<Duration> = ContinuousClock()) {
        self.options = options
        self.clock = clock
    }

    /// The partial file kept for `destination`.
    public static func partialFile(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(destination.lastPathComponent + ".part")
    }

    /// The resume record kept beside the partial file.
    static func resumeRecord(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(destination.lastPathComponent + ".part.resume")
    }

    /// Downloads `url` to `destination` (replaced when the download completes), trying up to
    /// `maximumAttempts` times and resuming from the bytes already received. When every attempt fails, the
    /// partial file stays for a later call to resume. Cancelling the task stops the transfer (the partial
    /// file stays too).
    @discardableResult
    public func download(
        from url: URL, to destination: URL, maximumAttempts: Int = 1,
        progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in }
    ) async throws -> DownloadResult {
        let reporter = ProgressReporter(progress)
        var attempt = 0
        var firstResumed: Int64?
        while true {
            attempt += 1
            do {
                let outcome = try await transfer(url, to: destination, reporter: reporter)
                if firstResumed == nil { firstResumed = outcome.resumedFrom }
                let size = try Self.finish(destination)
                reporter.report(DownloadProgress(received: size, expected: size))
                return DownloadResult(file: destination, size: size, attempts: attempt,
                                      resumedBytes: outcome.resumedFrom)
            } catch let error as CourierError {
                guard attempt < maximumAttempts, error.code != .cancelled, !Task.isCancelled,
                    Self.isResumable(error)
                else { throw error }
                try await clock.sleep(for: options.retryDelay)
            }
        }
    }

    static func isResumable(_ error: CourierError) -> Bool {
        switch error.code {
        case .connectionLost, .timedOut, .cannotConnect, .notConnected, .transportFailure, .serviceUnavailable,
            .badGateway, .gatewayTimeout:
            return true
        default:
            return false
        }
    }

    private static func finish(_ destination: URL) throws -> Int64 {
        let manager = FileManager.default
        let partial = partialFile(for: destination)
        do {
            if manager.fileExists(atPath: destination.path) { try manager.removeItem(at: destination) }
            try manager.moveItem(at: partial, to: destination)
            try? manager.removeItem(at: resumeRecord(for: destination))
            let attributes = try manager.attributesOfItem(atPath: destination.path)
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            throw CourierError(.invalidConfiguration, detail: "could not move the download into place", underlying: error)
        }
    }

    // MARK: - One attempt

    struct Outcome {
        var resumedFrom: Int64
    }

    private func transfer(_ url: URL, to destination: URL, reporter: ProgressReporter) async throws -> Outcome {
        let partial = Self.partialFile(for: destination)
        let record = Self.resumeRecord(for: destination)
        let manager = FileManager.default
        var offset: Int64 = 0
        var validator: String?
        if manager.fileExists(atPath: partial.path),
            let data = try? Data(contentsOf: record), let text = String(data: data, encoding: .utf8), !text.isEmpty
        {
            offset = ((try? manager.attributesOfItem(atPath: partial.path))?[.size] as? NSNumber)?.int64Value ?? 0
            validator = text
        } else {
            try? manager.removeItem(at: partial)
            try? manager.removeItem(at: record)
        }
        if !manager.fileExists(atPath: partial.path) {
            guard manager.createFile(atPath: partial.path, contents: nil) else {
                throw CourierError(.invalidConfiguration, detail: "cannot create \(partial.path)")
            }
        }

        var request = URLRequest(url: url)
        request.timeoutInterval = RetryPolicy.seconds(options.idleTimeout)
        for field in options.headerFields {
            request.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        if offset > 0, let validator {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue(validator, forHTTPHeaderField: "If-Range")
        }

        let delegate = try TransferDelegate(file: partial, record: record, offset: offset, reporter: reporter)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                delegate.start(continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return Outcome(resumedFrom: delegate.resumedFrom)
    }
}

/// Reports progress in order and never backwards.
final class ProgressReporter: Sendable {
    private let callback: @Sendable (DownloadProgress) -> Void
    private let last = Locked<Int64>(-1)

    init(_ callback: @escaping @Sendable (DownloadProgress) -> Void) { self.callback = callback }

    func report(_ progress: DownloadProgress) {
        let advanced = last.withLock { last -> Bool in
            guard progress.received > last || (progress.received == last && progress.expected == progress.received)
            else { return false }
            last = progress.received
            return true
        }
        if advanced { callback(progress) }
    }
}

/// Writes one attempt's body to the partial file (delegate callbacks come one at a time on a serial queue).
final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the mutable state is only touched from the session's serial delegate queue, and the
    // continuation is guarded by the mutex.
    private let handle: FileHandle
    private let record: URL
    private let reporter: ProgressReporter
    private let offset: Int64
    private var received: Int64
    private var expected: Int64?
    private var failure: CourierError?
    private(set) var resumedFrom: Int64 = 0
    private let continuation = Locked<CheckedContinuation<Void, any Error>?>(nil)

    init(file: URL, record: URL, offset: Int64, reporter: ProgressReporter) throws {
        do {
            handle = try FileHandle(forWritingTo: file)
        } catch {
            throw CourierError(.invalidConfiguration, detail: "cannot write \(file.path)", underlying: error)
        }
        self.record = record
        self.offset = offset
        self.received = offset
        self.reporter = reporter
    }

    func start(_ continuation: CheckedContinuation<Void, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            failure = CourierError(.unexpectedStatus, detail: "not an HTTP response")
            completionHandler(.cancel)
            return
        }
        let length = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
        do {
            switch http.statusCode {
            case 206 where offset > 0:
                let range = http.value(forHTTPHeaderField: "Content-Range") ?? ""
                guard range.hasPrefix("bytes \(offset)-") else {
                    throw CourierError(.unexpectedStatus, detail: "the server resumed at the wrong offset (\(range))")
                }
                try handle.seekToEnd()
                resumedFrom = offset
                expected = range.split(separator: "/").last.flatMap { Int64($0) } ?? length.map { offset + $0 }
            case 200:
                // A fresh start (no Range sent, or the file changed and If-Range did not match).
                try handle.truncate(atOffset: 0)
                received = 0
                expected = length
            default:
                throw CourierError(.http(status: http.statusCode), detail: "the download answered \(http.statusCode)")
            }
            let validator = http.value(forHTTPHeaderField: "ETag") ?? http.value(forHTTPHeaderField: "Last-Modified")
            try Data((validator ?? "").utf8).write(to: record)
            reporter.report(DownloadProgress(received: received, expected: expected))
            completionHandler(.allow)
        } catch {
            failure = CourierError.wrap(error, as: .transportFailure)
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil else { return }
        do {
            try handle.write(contentsOf: data)
            received += Int64(data.count)
            reporter.report(DownloadProgress(received: received, expected: expected))
        } catch {
            failure = CourierError(.transportFailure, detail: "writing the download failed", underlying: error)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle.synchronize()
        try? handle.close()
        var result: Result<Void, any Error> = .success(())
        if let failure {
            result = .failure(failure)
        } else if let error {
            result = .failure(Self.map(error))
        } else if let expected, received != expected {
            result = .failure(CourierError(.connectionLost, detail: "the download ended at \(received) of \(expected) bytes"))
        }
        let waiting = continuation.withLock { continuation -> CheckedContinuation<Void, any Error>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }

    static func map(_ error: any Error) -> CourierError {
        let code = (error as? URLError)?.code
        switch code {
        case .cancelled?: return CourierError(.cancelled, underlying: error)
        case .timedOut?: return TransportFailure.timedOut.error(underlying: error)
        case .cannotConnectToHost?: return TransportFailure.cannotConnect.error(underlying: error)
        case .networkConnectionLost?: return TransportFailure.connectionLost.error(underlying: error)
        case .notConnectedToInternet?: return TransportFailure.notConnected.error(underlying: error)
        case .cannotFindHost?, .dnsLookupFailed?: return TransportFailure.hostNotFound.error(underlying: error)
        default: return TransportFailure.connectionLost.error(detail: "the download was interrupted", underlying: error)
        }
    }
}
