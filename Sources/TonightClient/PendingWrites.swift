import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A write to send when the network allows, with the idempotency key that makes resending safe.
public struct PendingWrite: Codable, Sendable, Equatable, Identifiable {
    /// Also the `Idempotency-Key`: the server runs the write at most once however often it is sent.
    public var id: String
    public var method: String
    /// Path under the server URL, e.g. `/v1/me/password`.
    public var path: String
    /// JSON body.
    public var body: Data?
    public var createdAt: Date
}

/// Writes waiting to be sent, kept in memory or in a JSON file so they survive relaunches.
public actor PendingWrites {
    private var writes: [PendingWrite]
    private let fileURL: URL?

    /// Loads queued writes from `fileURL` (if given).
    public init(fileURL: URL? = nil) {
        self.fileURL = fileURL
        if let fileURL, let data = try? Data(contentsOf: fileURL),
            let saved = try? JSONDecoder().decode([PendingWrite].self, from: data)
        {
            writes = saved
        } else {
            writes = []
        }
    }

    /// The queued writes, oldest first.
    public var all: [PendingWrite] { writes }

    func append(_ write: PendingWrite) {
        writes.append(write)
        persist()
    }

    func remove(id: String) {
        writes.removeAll { $0.id == id }
        persist()
    }

    private func persist() {
        guard let fileURL, let data = try? JSONEncoder().encode(writes) else { return }
        try? data.write(to: fileURL, options: .atomic)
    }
}

/// The outcome of ``TonightClient/flushPendingWrites()``.
public struct FlushResult: Sendable {
    /// Writes the server accepted.
    public var sent: [PendingWrite] = []
    /// Writes the server refused for good (a 4xx), with its answer; they are dropped.
    public var refused: [(PendingWrite, TonightError)] = []
    /// Writes still queued because the server could not be reached or failed (5xx).
    public var remaining: Int = 0
}

extension TonightClient {
    /// Queues a write to send later with ``flushPendingWrites()``.
    @discardableResult
    public func enqueueWrite(method: String = "POST", path: String, json body: Data? = nil) async -> PendingWrite {
        let write = PendingWrite(
            id: UUID().uuidString.lowercased(), method: method, path: path, body: body, createdAt: Date())
        await pendingWrites.append(write)
        return write
    }

    /// Sends queued writes in order. Stops at the first network or server failure, keeping it and
    /// the rest for the next flush; each write carries its idempotency key, so a write whose answer
    /// was lost is not applied twice.
    /// - Parameter timeout: How long each write may take before the flush stops.
    public func flushPendingWrites(timeout: Duration = .seconds(30)) async -> FlushResult {
        var result = FlushResult()
        for write in await pendingWrites.all {
            do {
                let status = try await send(write, timeout: timeout)
                if (200..<300).contains(status.0) {
                    await pendingWrites.remove(id: write.id)
                    result.sent.append(write)
                } else if status.0 >= 500 || status.0 == 429 {
                    break
                } else {
                    await pendingWrites.remove(id: write.id)
                    result.refused.append((write, status.1 ?? .unexpectedResponse(status: status.0)))
                }
            } catch {
                break
            }
        }
        result.remaining = await pendingWrites.all.count
        return result
    }

    private func send(_ write: PendingWrite, timeout: Duration, retried: Bool = false) async throws
        -> (Int, TonightError?)
    {
        var request = HTTPClientRequest(url: serverURL.absoluteString.trimmingSuffix("/") + write.path)
        request.method = HTTPMethod(rawValue: write.method)
        request.headers.add(name: "Idempotency-Key", value: write.id)
        let token = try await session.accessToken()
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body = write.body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await httpClient.execute(request, timeout: .init(timeout))
        let data = try await response.body.collect(upTo: 1 << 20)
        let problem = try? JSONDecoder().decode(TonightError.Problem.self, from: Data(data.readableBytesView))
        if response.status.code == 401, !retried, problem?.code == "invalid_token",
            try await session.refresh(after: token) != nil
        {
            return try await send(write, timeout: timeout, retried: true)
        }
        return (Int(response.status.code), problem.map(TonightError.problem))
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
