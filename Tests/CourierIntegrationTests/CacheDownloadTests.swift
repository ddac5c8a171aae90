import Courier
import CourierCache
import CourierDemoServer
import Foundation
import Testing

@Suite(.serialized) struct CacheDownloadTests {
    /// Checks `file` against the server's pattern, 1 MiB at a time, yielding between chunks so the check does
    /// not hold a thread of the shared pool for seconds.
    func matchesPattern(_ file: URL, size: Int64) async throws -> Bool {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < size {
            await Task.yield()
            let count = Int(min(1 << 20, size - offset))
            guard let chunk = try handle.read(upToCount: count), chunk.count == count,
                chunk.elementsEqual(DownloadPattern.bytes(at: offset, count: count))
            else { return false }
            offset += Int64(count)
        }
        return try handle.read(upToCount: 1)?.isEmpty ?? true
    }

    @Test func interruptedTwoHundredMegabyteDownloadResumesByteIdentical() async throws {
        try await withDemoServer { server, _ in
            let size: Int64 = 200 << 20
            let drop: Int64 = 83 << 20 + 12_345
            let url = URL(string: "\(server.baseURL)/cache/download?size=\(size)&drop=\(drop)&key=big")!
            let destination = URL(fileURLWithPath: cacheTempPath()).deletingLastPathComponent()
                .appendingPathComponent("big.bin")
            let updates = Locked<(count: Int, last: Int64, monotonic: Bool, final: DownloadProgress?)>((0, -1, true, nil))
            let downloader = Downloader()
            let result = try await downloader.download(from: url, to: destination, maximumAttempts: 3) { progress in
                updates.withLock { state in
                    if progress.received < state.last { state.monotonic = false }
                    state.last = progress.received
                    state.count += 1
                    state.final = progress
                }
            }
            #expect(result.attempts == 2)
            #expect(result.size == size)
            #expect(result.resumedBytes > 0 && result.resumedBytes <= drop)
            let progress = updates.withLock { $0 }
            #expect(progress.monotonic)
            #expect(progress.count > 10)
            #expect(progress.final?.fraction == 1.0)
            #expect(progress.final?.received == size)
            #expect(!FileManager.default.fileExists(atPath: Downloader.partialFile(for: destination).path))
            let ranges = try await CacheBench(server: server).stats()["rangeRequests"]?.arrayValue ?? []
            #expect(ranges.map { $0.stringValue ?? "" } == ["bytes=\(result.resumedBytes)-"])
            #expect(try await matchesPattern(destination, size: size))
            try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
        }
    }

    @Test func failedDownloadKeepsItsPartialFileForALaterCall() async throws {
        try await withDemoServer { server, _ in
            let size: Int64 = 8 << 20
            let url = URL(string: "\(server.baseURL)/cache/download?size=\(size)&drop=\(3 << 20)&key=later")!
            let destination = URL(fileURLWithPath: cacheTempPath()).deletingLastPathComponent()
                .appendingPathComponent("later.bin")
            let downloader = Downloader()
            let error = try await #require(throws: CourierError.self) {
                try await downloader.download(from: url, to: destination, maximumAttempts: 1)
            }
            #expect(error.code == .connectionLost)
            let partial = Downloader.partialFile(for: destination)
            let kept = (try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.int64Value ?? 0
            #expect(kept > 0 && kept <= 3 << 20)
            let result = try await downloader.download(from: url, to: destination)
            #expect(result.resumedBytes == kept)
            #expect(try await matchesPattern(destination, size: size))
            try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
        }
    }
}

@Suite(.serialized) struct CacheUploadTests {
    @Test func multipartUploadWithMonotonicProgress() async throws {
        try await withDemoServer { server, _ in
            var form = MultipartForm(boundary: "courier-test-boundary")
            form.append(field: "title", "holiday")
            let photo = Data(DownloadPattern.bytes(at: 0, count: 3 << 20))
            form.append(data: photo, name: "photo", fileName: "photo.bin")
            let body = form.body
            let updates = Locked<[Int64]>([])
            let (status, answer) = try await Uploader().upload(
                form, to: URL(string: "\(server.baseURL)/echo")!
            ) { progress in
                updates.withLock { $0.append(progress.sent) }
            }
            #expect(status == 200)
            let value = try CodecSet.standard.decode(answer, format: .json)
            #expect(value["data"]?["bodyBytes"]?.int64Value == Int64(body.count))
            #expect(value["data"]?["headers"]?["content-type"]?.stringValue == form.contentType)
            let sent = updates.withLock { $0 }
            #expect(!sent.isEmpty)
            #expect(zip(sent, sent.dropFirst()).allSatisfy { $0 < $1 })
            #expect(sent.last == Int64(body.count))
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            #expect(text.hasPrefix("--courier-test-boundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nholiday\r\n"))
        }
    }
}
