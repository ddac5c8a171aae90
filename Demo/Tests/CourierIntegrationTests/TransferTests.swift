import Courier
import CourierCache
import CourierDemoServer
import CourierSecurity
import Crypto
import Foundation
import HTTPTypes
import Testing

/// Helpers for the transfer tests: files of ``DownloadPattern`` bytes, their digests, progress recording.
enum TransferSupport {
    /// A fresh folder for one test.
    static func folder() -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-transfer-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Writes `size` pattern bytes to `file`, 1 MiB at a time.
    static func writePattern(_ file: URL, size: Int64) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(1 << 20, size - offset))
            try handle.write(contentsOf: Data(DownloadPattern.bytes(at: offset, count: count)))
            offset += Int64(count)
        }
    }

    /// The SHA-256 (lower-case hex) of `file`, read 1 MiB at a time, yielding between chunks.
    static func sha256(of file: URL) async throws -> String {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
            await Task.yield()
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The SHA-256 of `size` pattern bytes.
    static func patternSHA256(size: Int64) async -> String {
        var hasher = SHA256()
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(1 << 20, size - offset))
            hasher.update(data: DownloadPattern.bytes(at: offset, count: count))
            offset += Int64(count)
            await Task.yield()
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func size(of file: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
    }

    /// Records `call`'s progress in the background; `finish()` returns the reports.
    final class Recorder: Sendable {
        private let task: Task<[TransferProgress], Never>
        init<T: Sendable>(_ call: Call<T>) {
            let stream = call.progress
            task = Task {
                var seen: [TransferProgress] = []
                for await step in stream { seen.append(step) }
                return seen
            }
        }
        func finish() async -> [TransferProgress] { await task.value }
    }

    /// Whether the reports of `direction` never go backwards and end at their total.
    static func monotonicToTheEnd(_ reports: [TransferProgress], _ direction: TransferProgress.Direction) -> Bool {
        let steps = reports.filter { $0.direction == direction }
        guard let last = steps.last, let total = last.total else { return false }
        return zip(steps, steps.dropFirst()).allSatisfy { $0.completed <= $1.completed }
            && last.completed == total && last.fraction == 1
    }
}

/// Uploads and downloads as calls, over the demo server's `/transfers` routes (auth, common parameters and
/// signatures checked by the server), on both transports.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TransferTests {
    static let transports: [TransportUnderTest] = [.urlSession, .asyncHTTPClient]

    func module(_ api: DemoAPI, startExpired: Bool = false, retry: Bool = false) -> APIModule {
        var module = DemoTransfers.module(service: api.service, store: DemoTransfers.credentialStore(startExpired: startExpired))
        if retry {
            var policy = RetryPolicy()
            policy.initialDelay = .milliseconds(20)
            module.interceptors.insert(RetryInterceptor(defaultPolicy: policy), at: 0)
        }
        return module
    }

    func stats(_ client: CourierClient, _ module: APIModule) async throws -> Value {
        try await client.send(Endpoint(name: "stats", module: module, path: "/transfers/stats")).value["data"] ?? .null
    }

    @Test(arguments: transports)
    func multipartUploadStreamsFilesThroughAuthRefreshSigningAndCommonParameters(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("photo.bin")
            try TransferSupport.writePattern(file, size: 5 << 20 + 123)
            var form = MultipartForm(boundary: "courier-test-boundary")
            form.append(field: "title", "holiday ☀️")
            form.append(data: Data("small".utf8), name: "note", fileName: "note.txt", contentType: "text/plain")
            try form.append(file: file, name: "photo", contentType: "application/octet-stream")
            // The store starts with an expired token: the 401 is refreshed and the (replayable) form sent again.
            let module = module(api, startExpired: true)
            let call = client.upload(DemoTransfers.upload(module: module), form: form, options: CallOptions(trace: true))
            let recorder = TransferSupport.Recorder(call)
            let reply = try await call.reply
            let parts = reply.value["data"]?["parts"]?.arrayValue ?? []
            #expect(parts.count == 3)
            #expect(parts.first?["text"]?.stringValue == "holiday ☀️")
            #expect(parts.dropFirst().first?["sha256"]?.stringValue == SHA256.hash(data: Data("small".utf8)).map { String(format: "%02x", $0) }.joined())
            #expect(parts.last?["size"]?.int64Value == Int64(5 << 20 + 123))
            #expect(try await parts.last?["sha256"]?.stringValue == TransferSupport.sha256(of: file))
            #expect(reply.value["data"]?["query"]?.stringValue?.contains("app_id=courier-demo") == true)
            let reports = await recorder.finish()
            #expect(TransferSupport.monotonicToTheEnd(reports, .upload))
            #expect(reports.last(where: { $0.direction == .upload })?.total == form.length)
            let stages = reply.metadata.trace?.stages.map(\.name) ?? []
            #expect(stages.contains("BearerAuth") && stages.contains("RequestSigning") && stages.contains("CommonParameters"))
        }
    }

    @Test(arguments: transports)
    func rawFileUploadIsStoredByteIdenticalAndDownloadsBack(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("raw.bin")
            try TransferSupport.writePattern(file, size: 3 << 20 + 7)
            let module = module(api)
            let stored = try await client.upload(DemoTransfers.store(name: "raw.bin", module: module), body: .file(file)).reply
            #expect(stored.value["data"]?["size"]?.int64Value == Int64(3 << 20 + 7))
            #expect(try await stored.value["data"]?["sha256"]?.stringValue == TransferSupport.sha256(of: file))
            let back = folder.appendingPathComponent("back.bin")
            let downloaded = try await client.download(DemoTransfers.file(name: "raw.bin", module: module), to: back).reply
            #expect(downloaded.value.size == Int64(3 << 20 + 7))
            #expect(try await TransferSupport.sha256(of: back) == TransferSupport.sha256(of: file))
            _ = try await client.send(DemoTransfers.delete(name: "raw.bin", module: module))
        }
    }

    @Test(arguments: transports)
    func aBodyThatDiffersFromItsSignedDigestIsRejected(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            // A one-shot stream is signed UNSIGNED-PAYLOAD, which the demo server refuses.
            let chunks = AsyncStream<Data> { continuation in
                continuation.yield(Data("one-shot".utf8))
                continuation.finish()
            }
            let error = try await #require(throws: CourierError.self) {
                try await client.upload(DemoTransfers.upload(module: module(api)), body: BodyStream(chunks, length: 8)).reply
            }
            #expect(error.code == .unauthorized)
            #expect(error.detail?.contains("unsigned payload") == true)
        }
    }

    @Test(arguments: transports)
    func anInterruptedDownloadKeepsItsPartialFileAndTheNextCallResumes(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("later.bin")
            let size: Int64 = 8 << 20
            let module = module(api)
            let endpoint = DemoTransfers.pattern(size: size, module: module, drop: 3 << 20, key: "later-\(transport)")
            let error = try await #require(throws: CourierError.self) {
                try await client.download(endpoint, to: destination).reply
            }
            #expect(error.code == .connectionLost)
            let partial = CourierClient.partialFile(forDownloadTo: destination)
            let kept = try #require(TransferSupport.size(of: partial))
            #expect(kept > 0 && kept <= 3 << 20)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let call = client.download(endpoint, to: destination)
            let recorder = TransferSupport.Recorder(call)
            let file = try await call.reply.value
            #expect(file.resumedBytes == kept)
            #expect(file.size == size)
            #expect(try await TransferSupport.sha256(of: destination) == TransferSupport.patternSHA256(size: size))
            #expect(!FileManager.default.fileExists(atPath: partial.path))
            let reports = await recorder.finish()
            #expect(TransferSupport.monotonicToTheEnd(reports, .download))
            #expect(reports.first(where: { $0.direction == .download })?.completed == kept)
            let seen = try await stats(client, module)
            #expect(seen["rangeRequests"]?.arrayValue?.last?.stringValue == "bytes=\(kept)-")
            #expect(seen["ifRanges"]?.arrayValue?.last?.stringValue == "\"pattern-\(size)\"")
        }
    }

    @Test(arguments: transports)
    func retryResumesTheFailingCallItself(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("retried.bin")
            let size: Int64 = 6 << 20
            let module = module(api, retry: true)
            let endpoint = DemoTransfers.pattern(size: size, module: module, drop: 2 << 20 + 5, key: "retry-\(transport)")
            let reply = try await client.download(endpoint, to: destination, options: CallOptions(trace: true)).reply
            #expect(reply.value.resumedBytes > 0)
            #expect(try await TransferSupport.sha256(of: destination) == TransferSupport.patternSHA256(size: size))
            let transportStages = reply.metadata.trace?.stages.filter { $0.name == "transport" } ?? []
            #expect(transportStages.count == 2)
        }
    }

    @Test(arguments: transports)
    func aServerIgnoringRangeOrAChangedFileRestartsCleanly(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size: Int64 = 4 << 20
            let module = module(api)
            for (index, resumeWith) in [
                DemoTransfers.pattern(size: size, module: module, ignoresRange: true),   // answers 200 to the range
                DemoTransfers.pattern(size: size, module: module, eTag: "changed"),       // If-Range does not match
            ].enumerated() {
                let destination = folder.appendingPathComponent("restart-\(index).bin")
                let first = DemoTransfers.pattern(size: size, module: module, drop: 1 << 20, key: "restart-\(transport)-\(index)")
                _ = try? await client.download(first, to: destination).reply
                #expect((TransferSupport.size(of: CourierClient.partialFile(forDownloadTo: destination)) ?? 0) > 0)
                let file = try await client.download(resumeWith, to: destination).reply.value
                #expect(file.resumedBytes == 0)
                #expect(file.size == size)
                #expect(try await TransferSupport.sha256(of: destination) == TransferSupport.patternSHA256(size: size))
            }
        }
    }

    @Test(arguments: transports)
    func rangeNotSatisfiableFinishesAWholeFileOrDiscardsAStaleOne(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size: Int64 = 1 << 20
            let module = module(api)
            let endpoint = DemoTransfers.pattern(size: size, module: module)
            // A partial file already whole: the 416 says so, and the download completes.
            let whole = folder.appendingPathComponent("whole.bin")
            try TransferSupport.writePattern(CourierClient.partialFile(forDownloadTo: whole), size: size)
            try Data("\"pattern-\(size)\"".utf8).write(to: folder.appendingPathComponent("whole.bin.part.resume"))
            let done = try await client.download(endpoint, to: whole).reply.value
            #expect(done.size == size && done.resumedBytes == size)
            // A partial file longer than the server's: 416, discarded, and the next call starts over.
            let stale = folder.appendingPathComponent("stale.bin")
            try TransferSupport.writePattern(CourierClient.partialFile(forDownloadTo: stale), size: size + 10)
            try Data("\"pattern-\(size)\"".utf8).write(to: folder.appendingPathComponent("stale.bin.part.resume"))
            let error = try await #require(throws: CourierError.self) { try await client.download(endpoint, to: stale).reply }
            #expect(error.code == .rangeNotSatisfiable)
            #expect(!FileManager.default.fileExists(atPath: CourierClient.partialFile(forDownloadTo: stale).path))
            let fresh = try await client.download(endpoint, to: stale).reply.value
            #expect(fresh.size == size && fresh.resumedBytes == 0)
        }
    }

    @Test(arguments: transports)
    func anErrorAnswerIsAReadableHTTPErrorNotAFile(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("missing.bin")
            let error = try await #require(throws: CourierError.self) {
                try await client.download(DemoTransfers.file(name: "missing.bin", module: module(api)), to: destination).reply
            }
            #expect(error.code == .notFound)
            #expect(error.detail == "The server said: no such file")
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            #expect(!FileManager.default.fileExists(atPath: CourierClient.partialFile(forDownloadTo: destination).path))
            // Without the common parameter the server answers 400, decoded the same way.
            let bare = APIModule(name: "bare", service: api.service)
            let refused = try await #require(throws: CourierError.self) {
                try await client.download(DemoTransfers.pattern(size: 10, module: bare), to: destination).reply
            }
            #expect(refused.code == .badRequest)
            #expect(refused.detail?.contains("app_id") == true)
        }
    }

    @Test(arguments: transports)
    func endlessAndOversizedDownloadsStopAtTheirLimit(_ transport: TransportUnderTest) async throws {
        try await transport.run { transport in
            try await HostileServer.with { server in
                let client = CourierClient(transport: transport)
                let folder = TransferSupport.folder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let module = APIModule(name: "hostile", service: APIService(name: "hostile", baseURL: server.baseURL))
                for path in ["/endless", "/huge-length"] {
                    let destination = folder.appendingPathComponent("endless.bin")
                    let error = try await #require(throws: CourierError.self) {
                        try await client.download(Endpoint(name: "endless", module: module, path: path), to: destination,
                                                  maximumSize: 4 << 20).reply
                    }
                    #expect(error.code == .responseTooLarge, "\(path)")
                    #expect((TransferSupport.size(of: CourierClient.partialFile(forDownloadTo: destination)) ?? 0) <= 4 << 20)
                }
            }
        }
    }

    @Test(arguments: transports)
    func aFileChangingMidUploadFailsClearly(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            for change in ["remove", "truncate"] {
                let folder = TransferSupport.folder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let file = folder.appendingPathComponent("vanishing.bin")
                try TransferSupport.writePattern(file, size: 64 << 20)
                // Signing reads the file once for its digest before the body streams; the change happens while
                // it streams (to a route that stores any size, so the server never answers first).
                let call = client.upload(DemoTransfers.store(name: "vanishing.bin", module: module(api)), body: try .file(file))
                let watcher = Task {
                    for await step in call.progress where step.direction == .upload && step.completed >= 1 << 20 {
                        if change == "remove" {
                            try? FileManager.default.removeItem(at: file)
                        } else {
                            try? FileHandle(forWritingTo: file).truncate(atOffset: 2 << 20)
                        }
                        break
                    }
                }
                let error = try await #require(throws: CourierError.self) { try await call.reply }
                #expect(error.code == .bodySourceChanged, "\(change): \(error)")
                #expect(error.detail?.contains("vanishing.bin") == true)
                watcher.cancel()
            }
        }
    }

    @Test(arguments: transports)
    func cancellingTheModuleStopsADownloadAndKeepsItsPartialFile(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("cancelled.bin")
            let size: Int64 = 256 << 20
            let module = module(api)
            let call = client.download(DemoTransfers.pattern(size: size, module: module), to: destination)
            for await step in call.progress where step.completed >= 4 << 20 { break }
            #expect(client.cancelAll(module: "transfers") == 1)
            let error = try await #require(throws: CourierError.self) { try await call.reply }
            #expect(error.code == .cancelled)
            let kept = try #require(TransferSupport.size(of: CourierClient.partialFile(forDownloadTo: destination)))
            #expect(kept >= 4 << 20 && kept < size)
        }
    }
}

/// The acceptance run: a 200 MB upload and a 200 MB download interrupted and resumed, through a module
/// with auth, common parameters and signing, byte-identical on the far side, progress monotonic to 100 %.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LargeTransferTests {
    @Test(arguments: TransferTests.transports)
    func twoHundredMegabyteUploadAndResumedDownloadAreByteIdentical(_ transport: TransportUnderTest) async throws {
        try await transport.withDemoServer { client, _, api in
            let folder = TransferSupport.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size: Int64 = 200 << 20
            let module = DemoTransfers.module(service: api.service, store: DemoTransfers.credentialStore())
            let options = CallOptions(timeout: .seconds(500))

            let source = folder.appendingPathComponent("big-upload.bin")
            try TransferSupport.writePattern(source, size: size)
            let expected = try await TransferSupport.sha256(of: source)
            let upload = client.upload(DemoTransfers.store(name: "big-\(transport).bin", module: module),
                                       body: try .file(source), options: options)
            let uploadProgress = TransferSupport.Recorder(upload)
            let stored = try await upload.reply
            #expect(stored.value["data"]?["size"]?.int64Value == size)
            #expect(stored.value["data"]?["sha256"]?.stringValue == expected)
            #expect(TransferSupport.monotonicToTheEnd(await uploadProgress.finish(), .upload))
            _ = try await client.send(DemoTransfers.delete(name: "big-\(transport).bin", module: module))
            try FileManager.default.removeItem(at: source)

            let destination = folder.appendingPathComponent("big-download.bin")
            let drop: Int64 = 83 << 20 + 12_345
            let endpoint = DemoTransfers.pattern(size: size, module: module, drop: drop, key: "big-\(transport)")
            let interrupted = try await #require(throws: CourierError.self) {
                try await client.download(endpoint, to: destination, options: options).reply
            }
            #expect(interrupted.code == .connectionLost)
            let download = client.download(endpoint, to: destination, options: options)
            let downloadProgress = TransferSupport.Recorder(download)
            let file = try await download.reply.value
            #expect(file.size == size)
            #expect(file.resumedBytes > 0 && file.resumedBytes <= drop)
            let reports = await downloadProgress.finish()
            #expect(TransferSupport.monotonicToTheEnd(reports, .download))
            #expect(reports.count > 10)
            #expect(try await TransferSupport.sha256(of: destination) == TransferSupport.patternSHA256(size: size))
        }
    }
}
