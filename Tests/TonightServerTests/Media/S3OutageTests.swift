import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import Testing

@testable import TonightServer

/// Media storage that refuses, hangs or is left by the client: every S3 wait has a deadline, an
/// outage answers 503 `storage_unavailable` and stores nothing, a retried upload never makes a
/// second post, and media jobs back off. moto's S3 sits behind a ``TCPProxy`` that takes it away.
@Suite(motoAvailable) struct S3OutageTests {
    @Test(
        "S3 refusing or hanging answers 503 at once or at the deadline; retries and departed clients make no extra post"
    )
    func outages() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            let proxy = try await TCPProxy(to: "127.0.0.1", port: moto.port)
            try await withLiveApp(
                .sqlite,
                configure: { config in
                    config.mediaStorage = "s3"
                    config.s3Endpoint = "http://127.0.0.1:\(proxy.port)"
                    config.s3Bucket = moto.bucket
                    config.s3AccessKey = moto.credentials.accessKeyID
                    config.s3SecretKey = moto.credentials.secretAccessKey
                    // Long enough that "at once" (a refused connection, no retry) and "at the deadline"
                    // stay apart on a machine busy with the whole suite.
                    config.s3TimeoutMilliseconds = 8000
                }
            ) { services, client in
                let alice = try await client.member("alice")
                let clip = try await Clips.mp4()
                let city = ["city": "Halifax$Nova Scotia$CA"]
                func posts() async throws -> Int { try await rowCount("posts", in: services) ?? -1 }
                func leftovers() -> [String] {
                    (try? FileManager.default.contentsOfDirectory(atPath: services.config.uploadDirectory)) ?? []
                }

                // Refused: answered at once (it waited 60 s and more before), nothing stored.
                await proxy.cut()
                let started = ContinuousClock.now
                let refused = try await client.upload(clip, fields: city, token: alice.token)
                #expect(refused.status == .serviceUnavailable, "\(refused.text)")
                #expect(refused.json["code"] as? String == "storage_unavailable")
                #expect(refused.headers[.retryAfter] == "5")
                #expect(ContinuousClock.now - started < .seconds(8))
                #expect(try await posts() == 0)
                #expect(leftovers().isEmpty)
                try await proxy.restore()

                // Hanging without a reset: answered at the deadline.
                proxy.freeze(true)
                let hung = try await client.upload(clip, fields: city, token: alice.token)
                #expect(hung.status == .serviceUnavailable, "\(hung.text)")
                #expect(hung.json["code"] as? String == "storage_unavailable")
                #expect(try await posts() == 0)

                // A client that gives up and retries with its Idempotency-Key: told to wait while the
                // first still runs, then given the first's answer; one post.
                // (The test client has one connection; the retry comes on another, as a client's would.)
                let port = try #require(client.port)
                let (body, type) = multipartBody(city, file: clip)
                struct Answer: Sendable {
                    var status: Int
                    var data: Data
                    var replayed: Bool
                    var json: JSON { (try? JSONSerialization.jsonObject(with: data)) as? JSON ?? [:] }
                }
                func keyed() async throws -> Answer {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/posts")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(alice.token)")
                    request.headers.add(name: "Content-Type", value: type)
                    request.headers.add(name: "Idempotency-Key", value: "upload-1")
                    request.body = .bytes(body)
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                    let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
                    let replayed = response.headers.first(name: "Idempotent-Replayed") == "true"
                    return Answer(status: Int(response.status.code), data: data, replayed: replayed)
                }
                let first = Task { try await keyed() }
                // The retry goes once the first is being written (its key is taken before that); a
                // fixed pause let a loaded machine send the retry first.
                #expect(try await eventually(within: .seconds(30)) { !leftovers().isEmpty })
                let retry = try await keyed()
                #expect(retry.status == 409 && retry.json["code"] as? String == "in_progress", "\(retry.json)")
                proxy.freeze(false)
                let created = try await first.value
                #expect(created.status == 201, "\(created.json)")
                let again = try await keyed()
                #expect(again.status == 201 && again.replayed, "\(again.json)")
                #expect(again.json["id"] as? String == created.json["id"] as? String)
                #expect(try await posts() == 1)

                // A client that leaves while its upload goes to S3: the upload is abandoned (its blob
                // deleted, no post). Failed before: the post was made for nobody.
                proxy.freeze(true)
                let connection = try await RawConnection(port: port)
                try await connection.send(
                    "POST /v1/posts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(alice.token)\r\n"
                        + "Content-Type: \(type)\r\nContent-Length: \(body.readableBytes)\r\n\r\n")
                try await connection.send(bytes: body)
                try await connection.finishSending()
                try await Task.sleep(for: .milliseconds(500))
                proxy.freeze(false)
                #expect(try await holds(within: .seconds(10)) { leftovers().isEmpty })
                await connection.close()
                #expect(try await posts() == 1)
                let id = try #require(created.json["id"] as? String)
                #expect(try await services.posts.blobs.list(prefix: "posts/") == ["posts/\(id)/original.mp4"])

                // A media job while S3 refuses: the attempt fails at once and is retried later.
                await proxy.cut()
                let worker = JobWorker(
                    queue: services.jobs, handlers: services.jobHandlers, kinds: .except([MailJob.kind]),
                    logger: services.logger)
                let attempt = ContinuousClock.now
                #expect(try await worker.runOnce() >= 1)
                #expect(ContinuousClock.now - attempt < .seconds(8))
                let jobs = try await services.database.sql.raw(
                    "SELECT id FROM jobs WHERE kind = 'media.process'"
                ).all()
                let job = try await services.jobs.job(
                    id: try #require(jobs.first).decode(column: "id", as: String.self))
                #expect(job?.state == .queued && job?.attempts == 1 && (job?.runAt ?? 0) > Clock.millis())
                try await proxy.restore()
            }
        }
    }
}
