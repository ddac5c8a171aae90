import Courier
import CourierDemoServer
import CourierSecurity
import Foundation
import HTTPTypes

extension Tour {
    /// The transfer steps: an authenticated, signed multipart upload streamed from disk, then a download the
    /// server interrupts, resumed by the next call. Returns the number of steps that did not behave as expected.
    func runTransferSteps(from first: Int) async -> Int {
        var failures = 0
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Starts with an expired token: the first answer is a 401, refreshed and sent again (the form is replayable).
        let module = DemoTransfers.module(service: api.service, store: DemoTransfers.credentialStore(startExpired: true))
        print("")
        print("Chain of the transfer module: \(client.pipeline(for: DemoTransfers.upload(module: module)).stageNames.joined(separator: " → "))")

        heading(first, "An authenticated, signed upload: POST /transfers/upload, multipart streamed from disk")
        do {
            let photo = folder.appendingPathComponent("photo.bin")
            let size = 4 << 20
            try Data(DownloadPattern.bytes(at: 0, count: size)).write(to: photo)
            var form = MultipartForm()
            form.append(field: "title", "Holiday")
            try form.append(file: photo, name: "photo", contentType: "application/octet-stream")
            let call = client.upload(DemoTransfers.upload(module: module), form: form)
            let shown = Task {
                var lines = 0
                for await step in call.progress where step.direction == .upload {
                    if lines == 0 || step.fraction == 1 || step.completed >= Int64(lines) * (3 << 19) {
                        print("   progress: \(step)")
                        lines += 1
                    }
                }
            }
            let reply = try await call.reply
            await shown.value
            let parts = reply.value["data"]?["parts"]?.arrayValue ?? []
            let local = try await RequestSigning.digest(of: .file(photo))
            let remote = parts.last?["sha256"]?.stringValue ?? ""
            print("   ✓ \(reply.metadata.status.code): the server checked app_id, the bearer token and the signed SHA-256 "
                  + "digest, and received \(parts.count) parts; photo \(parts.last?["size"]?.int64Value ?? 0) B, "
                  + "SHA-256 \(remote.prefix(16))… \(remote == local ? "matches" : "DIFFERS")")
            if remote != local || parts.count != 2 { failures += 1 }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }

        heading(first + 1, "An interrupted download, resumed: GET /transfers/pattern (16 MiB, dropped at 6 MiB)")
        let size: Int64 = 16 << 20
        let destination = folder.appendingPathComponent("pattern.bin")
        let endpoint = DemoTransfers.pattern(size: size, module: module, drop: 6 << 20, key: "tour-\(UUID().uuidString)")
        do {
            _ = try await client.download(endpoint, to: destination).reply
            print("   ✗ expected the server to drop the first attempt")
            failures += 1
        } catch let error as CourierError {
            show(error)
            let kept = (try? FileManager.default.attributesOfItem(atPath: CourierClient.partialFile(forDownloadTo: destination).path))?[.size]
            print("   → the partial file is kept: \(kept.map { "\($0)" } ?? "none") bytes")
            if error.code != .connectionLost { failures += 1 }
        } catch {
            failures += 1
        }
        do {
            let file = try await client.download(endpoint, to: destination).reply.value
            let handle = try FileHandle(forReadingFrom: destination)
            defer { try? handle.close() }
            var same = true
            var offset: Int64 = 0
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                if !chunk.elementsEqual(DownloadPattern.bytes(at: offset, count: chunk.count)) { same = false }
                offset += Int64(chunk.count)
            }
            print("   ✓ resumed from \(file.resumedBytes) bytes (Range + If-Range); \(file.size) B on disk, "
                  + (same && offset == size ? "byte-identical to the server's" : "DIFFERENT from the server's"))
            if !same || offset != size || file.resumedBytes == 0 { failures += 1 }
        } catch {
            print("   ✗ \(error)")
            failures += 1
        }
        return failures
    }
}
