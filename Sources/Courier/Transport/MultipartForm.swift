public import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields, bytes and files, in order. Files are not read
/// when appended: ``body`` streams them from disk as the request is sent, so a form never sits whole in
/// memory, and its length (the `Content-Length`) is known up front. The body is replayable (a retry or an
/// auth refresh reads the files again).
///
/// ```swift
/// var form = MultipartForm()
/// form.append(field: "title", "Holiday")
/// try form.append(file: URL(fileURLWithPath: "/tmp/photo.jpg"), name: "photo", contentType: "image/jpeg")
/// let reply = try await client.upload(.photos, form: form).reply
/// ```
public struct MultipartForm: Sendable {
    /// The boundary between parts.
    public let boundary: String
    private var parts: [BodyStream] = []

    /// An empty form with a random boundary.
    public init(boundary: String = "courier-" + UUID().uuidString) { self.boundary = boundary }

    /// `multipart/form-data; boundary=...`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func append(field name: String, _ value: String) {
        parts.append(.data(Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n\(value)\r\n".utf8)))
    }

    /// Adds bytes as a file part.
    public mutating func append(
        data: Data, name: String, fileName: String, contentType: String = "application/octet-stream"
    ) {
        parts.append(.data(header(name: name, fileName: fileName, contentType: contentType)))
        parts.append(.data(data))
        parts.append(.data(Data("\r\n".utf8)))
    }

    /// Adds the file at `url` as a file part (named `fileName`, default the file's name). The file is read
    /// when the body is sent; a missing file fails here with ``CourierError/Code/fileAccessFailed``.
    public mutating func append(
        file url: URL, name: String, fileName: String? = nil, contentType: String = "application/octet-stream"
    ) throws {
        let file = try BodyStream.file(url)
        parts.append(.data(header(name: name, fileName: fileName ?? url.lastPathComponent, contentType: contentType)))
        parts.append(file)
        parts.append(.data(Data("\r\n".utf8)))
    }

    /// The encoded body, streamed part by part (files read from disk as it is sent).
    public var body: BodyStream {
        .concatenation(parts + [.data(Data("--\(boundary)--\r\n".utf8))])
    }

    /// The encoded body's size in bytes.
    public var length: Int64 { body.length ?? 0 }

    private func header(name: String, fileName: String, contentType: String) -> Data {
        Data(("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"; "
            + "filename=\"\(Self.quoted(fileName))\"\r\nContent-Type: \(contentType)\r\n\r\n").utf8)
    }

    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}
