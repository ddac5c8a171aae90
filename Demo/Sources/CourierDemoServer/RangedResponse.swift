import Courier
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A body of `size` bytes from `read`, honouring a suffix `Range` (`bytes=N-`) under `If-Range` (unless
/// `ignoresRange`), cut at `drop` by closing the connection — once per key, as `claimDrop` decides. `record`
/// hears every range asked for. Shared by the demo's download routes (`/cache/download`, `/transfers/…`).
func rangedResponse(
    _ request: Request, size: Int64, eTag: String, drop: (key: String, at: Int64)?, ignoresRange: Bool,
    record: @Sendable (_ range: String, _ ifRange: String?) -> Void, claimDrop: @Sendable (String) -> Bool,
    read: @escaping @Sendable (Int64, Int) throws -> Data
) -> Response {
    var start: Int64 = 0
    var status = HTTPResponse.Status.ok
    var fields: HTTPFields = [.contentType: "application/octet-stream", .eTag: eTag, .acceptRanges: "bytes"]
    if let range = request.headers[.range] {
        let ifRange = request.headers[HTTPField.Name("If-Range")!]
        record(range, ifRange)
        if !ignoresRange, ifRange == nil || ifRange == eTag, range.hasPrefix("bytes="), range.hasSuffix("-"),
            let first = Int64(range.dropFirst("bytes=".count).dropLast())
        {
            guard first < size else {
                return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(size)"])
            }
            start = first
            status = .partialContent
            fields[.contentRange] = "bytes \(first)-\(size - 1)/\(size)"
        }
    }
    let first = start
    let cutAt: Int64? = {
        guard let drop, drop.at > first, drop.at < size else { return nil }
        return claimDrop(drop.key) ? drop.at : nil
    }()
    let body = ResponseBody(contentLength: Int(size - first)) { writer in
        var offset = first
        while offset < size {
            let end = min(size, offset + (256 << 10), cutAt ?? size)
            if end > offset {
                try await writer.write(ByteBuffer(bytes: try read(offset, Int(end - offset))))
                offset = end
            }
            if let cutAt, offset >= cutAt {
                throw CourierError(.connectionLost, detail: "the demo server dropped the download at \(cutAt)")
            }
        }
        try await writer.finish(nil)
    }
    return Response(status: status, headers: fields, body: body)
}
