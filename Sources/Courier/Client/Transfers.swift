public import Foundation
import HTTPTypes

/// A finished download: where the file is and what it took.
public struct DownloadedFile: Sendable, Hashable {
    /// The destination the file was moved to.
    public var file: URL
    /// Its size in bytes.
    public var size: Int64
    /// How many bytes were kept from an earlier attempt or call instead of being fetched again.
    public var resumedBytes: Int64
}

// MARK: - Uploads and downloads as calls

extension CourierClient {
    /// Starts `endpoint` with `body` streamed as its request body (a file, a ``MultipartForm``'s body, any
    /// ``BodyStream``), through the endpoint's whole chain — common parameters, auth and refresh, signing
    /// (of the body's SHA-256 digest, see `RequestSigning`), logging, retry, cancellation — on any
    /// transport. The body is never whole in memory; its length, when known, is sent as `Content-Length`.
    /// Upload progress is on the returned handle (``Call/progress``); the answer is decoded as for any call.
    ///
    /// ```swift
    /// let call = client.upload(.putAvatar, body: try .file(avatarURL), contentType: "image/png")
    /// for await step in call.progress { print(step) }
    /// let reply = try await call.reply
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: The call; its chain runs as for any call.
    ///   - body: The request body, read as it is sent.
    ///   - contentType: The `Content-Type` (default: the endpoint's, else `application/octet-stream`).
    ///   - options: Per-call options (trace, timeout).
    public func upload(
        _ endpoint: Endpoint, body: BodyStream, contentType: String? = nil, options: CallOptions = CallOptions()
    ) -> Call<Value> {
        dispatch(Self.uploading(endpoint, body: body, contentType: contentType), options: options)
    }

    /// ``upload(_:body:contentType:options:)``, decoding the answer into `type`.
    public func upload<T: Decodable & Sendable>(
        _ endpoint: Endpoint, body: BodyStream, contentType: String? = nil, decoding type: T.Type,
        options: CallOptions = CallOptions()
    ) -> Call<T> {
        dispatch(Self.uploading(endpoint, body: body, contentType: contentType), decoding: type, options: options)
    }

    /// Starts `endpoint` with `form` as a streamed `multipart/form-data` body (files read from disk as they
    /// are sent); see ``upload(_:body:contentType:options:)``.
    ///
    /// ```swift
    /// var form = MultipartForm()
    /// form.append(field: "title", "Holiday")
    /// try form.append(file: photoURL, name: "photo", contentType: "image/jpeg")
    /// let reply = try await client.upload(.photos, form: form).reply
    /// ```
    public func upload(_ endpoint: Endpoint, form: MultipartForm, options: CallOptions = CallOptions()) -> Call<Value> {
        upload(endpoint, body: form.body, contentType: form.contentType, options: options)
    }

    /// ``upload(_:form:options:)``, decoding the answer into `type`.
    public func upload<T: Decodable & Sendable>(
        _ endpoint: Endpoint, form: MultipartForm, decoding type: T.Type, options: CallOptions = CallOptions()
    ) -> Call<T> {
        upload(endpoint, body: form.body, contentType: form.contentType, decoding: type, options: options)
    }

    static func uploading(_ endpoint: Endpoint, body: BodyStream, contentType: String?) -> Endpoint {
        var endpoint = endpoint
        endpoint.bodyStream = body
        if let contentType {
            endpoint.headers[.contentType] = contentType
        } else if endpoint.headers[.contentType] == nil, endpoint.module.headers[.contentType] == nil {
            endpoint.headers[.contentType] = "application/octet-stream"
        }
        return endpoint
    }

    /// Starts downloading `endpoint`'s response body into the file `destination`, through the endpoint's
    /// whole chain (common parameters, auth and refresh, signing, logging, retry, cancellation) on any
    /// transport, never holding the body in memory.
    ///
    /// The bytes go to `<destination>.part`, with the answer's validator (`ETag`, else `Last-Modified`) in
    /// `<destination>.part.resume`; when the body is complete the file is moved to `destination`
    /// (replacing it). When a call fails midway (connection lost, timed out, cancelled) the partial file
    /// stays, and the next call — a retry of the same call, or a later `download` with `resume: true` —
    /// asks only for the rest, with `Range` and `If-Range`:
    ///
    /// - `206` at the right offset: appended; the reply's ``DownloadedFile/resumedBytes`` says how much was
    ///   kept.
    /// - `200` (the server ignores ranges, or the file changed and `If-Range` did not match): the partial
    ///   file is discarded and the download starts over cleanly.
    /// - `416` with the partial file already whole: done; otherwise the partial file is discarded and the
    ///   call fails with ``CourierError/Code/rangeNotSatisfiable`` (the next call starts over).
    /// - A `206` at another offset fails with ``CourierError/Code/unexpectedStatus`` and discards the file.
    /// - Any other error status is an HTTP error whose (small, at most 1 MiB) body is decoded for its
    ///   message, as for any call, and never written to the file.
    ///
    /// A body that ends short of its declared length fails with ``CourierError/Code/connectionLost`` (the
    /// partial file kept); one that passes `maximumSize` (declared or counted) fails with
    /// ``CourierError/Code/responseTooLarge`` and is discarded. The client's `maximumResponseSize` does not
    /// apply: the bytes go to disk. Progress (``TransferProgress/Direction/download``, the total when the
    /// server declares it) is on the returned handle. The call's timeout bounds the whole transfer: give large
    /// downloads one that fits (``CallOptions/timeout``).
    ///
    /// ```swift
    /// let call = client.download(.report(id: 7), to: URL(fileURLWithPath: "/tmp/report.pdf"))
    /// Task { for await step in call.progress { print(step.fraction ?? 0) } }
    /// let file = try await call.reply.value
    /// print(file.file.path, file.size, file.resumedBytes)
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: The call; its chain runs as for any call.
    ///   - destination: The file the body is written to.
    ///   - resume: Resume from a partial file left by an earlier call (default true); false starts over.
    ///   - maximumSize: The largest file accepted (nil: no limit).
    ///   - options: Per-call options (trace, timeout).
    public func download(
        _ endpoint: Endpoint, to destination: URL, resume: Bool = true, maximumSize: Int64? = nil,
        options: CallOptions = CallOptions()
    ) -> Call<DownloadedFile> {
        var endpoint = endpoint
        let download = DownloadStage(destination: destination, resume: resume, maximumSize: maximumSize)
        endpoint.interceptors.append(download)
        if endpoint.headers[.accept] == nil, endpoint.module.headers[.accept] == nil {
            endpoint.headers[.accept] = "*/*"
        }
        return start(endpoint, options: options, shape: nil) { _ in try download.result() }
    }

    /// The partial file a download to `destination` keeps between attempts (`<destination>.part`).
    public static func partialFile(forDownloadTo destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(destination.lastPathComponent + ".part")
    }

    /// The resume record kept beside the partial file (`<destination>.part.resume`): the validator.
    static func resumeRecord(forDownloadTo destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(destination.lastPathComponent + ".part.resume")
    }
}

// MARK: - The download stage

/// The stage of a download call (named `download`, in the ``InterceptorRole/routing`` role: below retry, so
/// each attempt re-enters it, and above the codec and signing, so `Range` is signed): on each attempt it asks
/// for the bytes missing from the partial file, hands the transport a ``FileSink``, and moves the complete
/// file into place.
struct DownloadStage: Interceptor {
    let destination: URL
    let resume: Bool
    let maximumSize: Int64?
    private let outcome = Locked<DownloadedFile?>(nil)

    init(destination: URL, resume: Bool, maximumSize: Int64?) {
        self.destination = destination
        self.resume = resume
        self.maximumSize = maximumSize
    }

    var name: String { "download" }
    var role: InterceptorRole { .routing }

    func result() throws -> DownloadedFile {
        guard let file = outcome.withLock({ $0 }) else {
            throw CourierError(.interceptorContract, detail: "the download's answer did not come from the transport")
        }
        return file
    }

    func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let partial = CourierClient.partialFile(forDownloadTo: destination)
        let record = CourierClient.resumeRecord(forDownloadTo: destination)
        let manager = FileManager.default
        var request = request
        var offset: Int64 = 0
        if resume, let validator = try? String(contentsOf: record, encoding: .utf8), !validator.isEmpty,
            let size = Self.size(of: partial), size > 0
        {
            offset = size
            request.head.headerFields[.range] = "bytes=\(size)-"
            request.head.headerFields[HTTPField.Name("If-Range")!] = validator
        } else {
            try? manager.removeItem(at: partial)
            try? manager.removeItem(at: record)
        }
        let sink = FileSink(partial: partial, record: record, offset: offset, maximumSize: maximumSize,
                            method: request.head.method) { context.reportProgress($0) }
        request.responseSink = sink
        let response: CourierResponse
        do {
            response = try await next(request)
        } catch {
            sink.abandon()
            throw error
        }
        switch sink.state {
        case .file(let size, let resumedFrom):
            try Self.moveIntoPlace(partial, destination)
            if response.head.status == .rangeNotSatisfiable {
                // The partial file was already whole: nothing was missing, and the call succeeded.
                var whole = response
                whole.head.status = .ok
                whole.failure = nil          // the 416 is this download's success
                outcome.withLock { $0 = DownloadedFile(file: destination, size: size, resumedBytes: resumedFrom) }
                context.reportProgress(TransferProgress(direction: .download, completed: size, total: size))
                try? manager.removeItem(at: record)
                return whole
            }
            try? manager.removeItem(at: record)
            outcome.withLock { $0 = DownloadedFile(file: destination, size: size, resumedBytes: resumedFrom) }
            context.reportProgress(TransferProgress(direction: .download, completed: size, total: size))
        case .discarded:
            try? manager.removeItem(at: partial)
            try? manager.removeItem(at: record)
        case .errorAnswer:
            break
        }
        return response
    }

    static func size(of file: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
    }

    static func moveIntoPlace(_ partial: URL, _ destination: URL) throws {
        let manager = FileManager.default
        do {
            if manager.fileExists(atPath: destination.path) { try manager.removeItem(at: destination) }
            try manager.moveItem(at: partial, to: destination)
        } catch {
            throw CourierError(.fileAccessFailed, detail: "cannot move the download to \(destination.path)",
                               underlying: error)
        }
    }
}

/// Writes a download's body to its partial file as the transport delivers it (synchronously: the disk is
/// the backpressure), keeping an error answer's small body in memory instead.
final class FileSink: ResponseBodySink {
    /// What the answer turned out to be.
    enum Outcome: Sendable {
        /// The file is complete on disk: its size, and the bytes kept from before.
        case file(size: Int64, resumedFrom: Int64)
        /// The partial file no longer fits the server's file: delete it.
        case discarded
        /// An error status (its body in memory), the partial file untouched.
        case errorAnswer
    }

    private enum Mode {
        case idle, writing(FileHandle), memory(Data), complete, discard(Data)
    }

    private struct State {
        var mode = Mode.idle
        var offset: Int64
        var written: Int64
        var total: Int64?
        var finished: Outcome?
    }

    /// The most bytes of an error answer kept in memory.
    static let errorBodyLimit = 1 << 20

    private let partial: URL
    private let record: URL
    private let maximumSize: Int64?
    private let method: HTTPRequest.Method
    private let report: @Sendable (TransferProgress) -> Void
    private let locked: Locked<State>

    init(
        partial: URL, record: URL, offset: Int64, maximumSize: Int64?, method: HTTPRequest.Method,
        report: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.partial = partial
        self.record = record
        self.maximumSize = maximumSize
        self.method = method
        self.report = report
        self.locked = Locked(State(offset: offset, written: offset))
    }

    deinit { abandon() }

    /// The outcome, once ``finish()`` has run.
    var state: Outcome { locked.withLock { $0.finished } ?? .errorAnswer }

    func begin(_ head: HTTPResponse) throws {
        let status = Int(head.status.code)
        let fields = head.headerFields
        let length = fields[.contentLength].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        let offset = locked.withLock { $0.offset }
        switch status {
        case 206:
            guard offset > 0 else {
                throw discard(.unexpectedStatus, "the server answered 206 to a download that asked for no range")
            }
            let range = fields[.contentRange] ?? ""
            guard let (first, total) = Self.contentRange(range), first == offset else {
                throw discard(.unexpectedStatus, "the server resumed the download at the wrong offset (\(range); the file has \(offset) bytes)")
            }
            // A length that would take the total past `Int64.max` is a lie: the total stays unknown.
            let resumed = length.flatMap { length in
                let (sum, overflow) = offset.addingReportingOverflow(length)
                return overflow ? nil : sum
            }
            try start(at: offset, total: total ?? resumed, fields: fields)
        case 200..<300:
            // A fresh start: no range asked, the server ignores ranges, or the file changed (If-Range).
            try start(at: 0, total: method == .head || status == 204 ? 0 : length, fields: fields)
        case 416:
            if offset > 0, let total = Self.unsatisfiedLength(fields[.contentRange] ?? ""), total == offset {
                locked.withLock { $0.mode = .complete }
                report(TransferProgress(direction: .download, completed: offset, total: offset))
            } else {
                locked.withLock { $0.mode = .discard(Data()) }
            }
        default:
            locked.withLock { $0.mode = .memory(Data()) }
        }
    }

    private func start(at offset: Int64, total: Int64?, fields: HTTPFields) throws {
        if let maximumSize, let total, total > maximumSize {
            throw discard(.responseTooLarge, "the download declares \(total) bytes; the limit is \(maximumSize)")
        }
        let manager = FileManager.default
        if offset == 0 || !manager.fileExists(atPath: partial.path) {
            guard manager.createFile(atPath: partial.path, contents: nil) else {
                throw CourierError(.fileAccessFailed, detail: "cannot create \(partial.path)")
            }
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forWritingTo: partial)
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seekToEnd()
        } catch {
            throw CourierError(.fileAccessFailed, detail: "cannot write \(partial.path)", underlying: error)
        }
        // Resuming needs a validator: without one a later call starts over rather than mix two files.
        let validator = fields[.eTag] ?? fields[.lastModified] ?? ""
        do {
            try Data(validator.utf8).write(to: record)
        } catch {
            try? handle.close()
            throw CourierError(.fileAccessFailed, detail: "cannot write \(record.path)", underlying: error)
        }
        locked.withLock { state in
            state.mode = .writing(handle)
            state.offset = offset
            state.written = offset
            state.total = total
        }
        report(TransferProgress(direction: .download, completed: offset, total: total))
    }

    func write(_ chunk: Data) throws {
        let maximumSize = maximumSize
        var passedMaximum = false
        let progress = try locked.withLock { state -> TransferProgress? in
            switch state.mode {
            case .writing(let handle):
                let written = state.written + Int64(chunk.count)
                if let maximumSize, written > maximumSize {
                    passedMaximum = true     // discarded below: `discard` takes this lock
                    return nil
                }
                if let total = state.total, written > total {
                    throw CourierError(.transportFailure, detail: "the server sent more than the \(total) bytes it announced")
                }
                do {
                    try handle.write(contentsOf: chunk)
                } catch {
                    throw CourierError(.fileAccessFailed, detail: "cannot write \(self.partial.path)", underlying: error)
                }
                state.written = written
                return TransferProgress(direction: .download, completed: written, total: state.total)
            case .memory(var data), .discard(var data):
                let discarding = if case .discard = state.mode { true } else { false }
                guard chunk.count <= Self.errorBodyLimit - data.count else {
                    throw CourierError(.responseTooLarge, detail: "the error answer's body exceeds \(Self.errorBodyLimit) bytes")
                }
                state.mode = .idle
                data.append(chunk)
                state.mode = discarding ? .discard(data) : .memory(data)
                return nil
            case .complete, .idle:
                return nil
            }
        }
        // A file past its limit can never be resumed into one within it: deleted, as one declared too large is.
        if passedMaximum, let maximumSize {
            throw discard(.responseTooLarge, "the download passed \(maximumSize) bytes")
        }
        if let progress { report(progress) }
    }

    func finish() throws -> Data {
        try locked.withLock { state -> Data in
            switch state.mode {
            case .writing(let handle):
                try? handle.synchronize()
                try? handle.close()
                state.mode = .idle
                if let total = state.total, state.written != total {
                    throw CourierError(.connectionLost, detail: "the download ended at \(state.written) of \(total) bytes")
                }
                state.finished = .file(size: state.written, resumedFrom: state.offset)
                return Data()
            case .complete:
                state.finished = .file(size: state.offset, resumedFrom: state.offset)
                return Data()
            case .discard(let data):
                state.finished = .discarded
                return data
            case .memory(let data):
                state.finished = .errorAnswer
                return data
            case .idle:
                state.finished = .errorAnswer
                return Data()
            }
        }
    }

    /// Closes the partial file after a failure (the file stays, to be resumed).
    func abandon() {
        locked.withLock { state in
            if case .writing(let handle) = state.mode {
                try? handle.synchronize()
                try? handle.close()
            }
            state.mode = .idle
        }
    }

    /// Deletes the partial file and its record (they can never be resumed) and returns the error to throw.
    private func discard(_ code: CourierError.Code, _ detail: String) -> CourierError {
        abandon()
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: record)
        return CourierError(code, detail: detail)
    }

    /// `bytes first-last/total` → (first, total); total nil for `*`.
    static func contentRange(_ text: String) -> (Int64, Int64?)? {
        guard text.hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2, let dash = halves[0].firstIndex(of: "-"),
            let first = Int64(halves[0][..<dash].trimmingCharacters(in: .whitespaces))
        else { return nil }
        return (first, halves[1] == "*" ? nil : Int64(halves[1].trimmingCharacters(in: .whitespaces)))
    }

    /// `bytes */total` (a 416's Content-Range) → total.
    static func unsatisfiedLength(_ text: String) -> Int64? {
        guard text.hasPrefix("bytes */") else { return nil }
        return Int64(text.dropFirst("bytes */".count).trimmingCharacters(in: .whitespaces))
    }
}
