public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import HTTPTypes

/// A `multipart/form-data` body: text fields and files, in order.
///
/// ```swift
/// var form = MultipartForm()
/// form.append(field: "title", "Holiday")
/// try form.append(file: photoURL, name: "photo", contentType: "image/jpeg")
/// let reply = try await Uploader().upload(form, to: url) { sent in print(sent.fraction ?? 0) }
/// ```
public struct MultipartForm: Sendable {
    /// The boundary between parts.
    public let boundary: String
    private var parts: [Data] = []

    /// An empty form with a random boundary.
    public init(boundary: String = "courier-" + UUID().uuidString) { self.boundary = boundary }

    /// `multipart/form-data; boundary=...`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func append(field name: String, _ value: String) {
        var part = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n".utf8)
        part.append(Data(value.utf8))
        part.append(Data("\r\n".utf8))
        parts.append(part)
    }

    /// Adds a file's bytes.
    public mutating func append(data: Data, name: String, fileName: String, contentType: String = "application/octet-stream") {
        var part = Data("--\(boundary)\r\n".utf8)
        part.append(Data(("Content-Disposition: form-data; name=\"\(Self.quoted(name))\"; "
            + "filename=\"\(Self.quoted(fileName))\"\r\nContent-Type: \(contentType)\r\n\r\n").utf8))
        part.append(data)
        part.append(Data("\r\n".utf8))
        parts.append(part)
    }

    /// Adds the file at `url` (read now).
    public mutating func append(file url: URL, name: String, contentType: String = "application/octet-stream") throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw CourierError(.encodingFailed, detail: "cannot read \(url.lastPathComponent)", underlying: error)
        }
        append(data: data, name: name, fileName: url.lastPathComponent, contentType: contentType)
    }

    /// The encoded body.
    public var body: Data {
        var body = Data()
        for part in parts { body.append(part) }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}

/// How much of an upload has been sent.
public struct UploadProgress: Sendable, Hashable {
    /// Bytes sent.
    public var sent: Int64
    /// The body's size.
    public var total: Int64

    /// `sent / total`.
    public var fraction: Double? { total > 0 ? Double(sent) / Double(total) : nil }
}

/// Uploads bodies (a ``MultipartForm`` or raw bytes) with URLSession, reporting monotonic progress that ends
/// at 100 %. Like ``Downloader``, it streams beside the ``Courier/Transport`` rather than through it.
///
/// ```swift
/// let (status, body) = try await Uploader().upload(form, to: url) { progress in bar.value = progress.fraction ?? 0 }
/// ```
public final class Uploader: Sendable {
    /// Header fields added to every upload.
    public let headerFields: HTTPFields

    /// An uploader.
    public init(headerFields: HTTPFields = [:]) { self.headerFields = headerFields }

    /// Uploads `form`; returns the response status and body. A 4xx/5xx status is returned, not thrown.
    public func upload(
        _ form: MultipartForm, to url: URL, method: HTTPRequest.Method = .post,
        progress: @escaping @Sendable (UploadProgress) -> Void = { _ in }
    ) async throws -> (status: Int, body: Data) {
        try await upload(form.body, contentType: form.contentType, to: url, method: method, progress: progress)
    }

    /// Uploads `body` with `contentType`.
    public func upload(
        _ body: Data, contentType: String, to url: URL, method: HTTPRequest.Method = .post,
        progress: @escaping @Sendable (UploadProgress) -> Void = { _ in }
    ) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        for field in headerFields { request.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let delegate = UploadDelegate(total: Int64(body.count), progress: progress)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        let task = session.uploadTask(with: request, from: body)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.start(continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

final class UploadDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: mutable state is touched only from the session's serial delegate queue; the continuation
    // is guarded by the mutex.
    private let total: Int64
    private let progress: @Sendable (UploadProgress) -> Void
    private var lastSent: Int64 = -1
    private var status = 0
    private var received = Data()
    private let continuation = Locked<CheckedContinuation<(status: Int, body: Data), any Error>?>(nil)

    init(total: Int64, progress: @escaping @Sendable (UploadProgress) -> Void) {
        self.total = total
        self.progress = progress
    }

    func start(_ continuation: CheckedContinuation<(status: Int, body: Data), any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    private func report(_ sent: Int64) {
        guard sent > lastSent else { return }
        lastSent = sent
        progress(UploadProgress(sent: sent, total: total))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        report(min(totalBytesSent, total))
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let result: Result<(status: Int, body: Data), any Error>
        if let error {
            result = .failure(TransferDelegate.map(error))
        } else {
            report(total)   // every byte was sent once the server answered
            result = .success((status, received))
        }
        let waiting = continuation.withLock { continuation -> CheckedContinuation<(status: Int, body: Data), any Error>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}
