import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import TonightServer

@Suite("Uploads with an Idempotency-Key")
struct UploadIdempotencyTests {
    @Test(
        "an upload is fingerprinted as it streams: a resend with a new boundary replays, another file is a 422",
        arguments: Backend.available)
    func resend(_ backend: Backend) async throws {
        try await withApp(backend) { services, client in
            let alice = try await client.member("alice")
            let photo = try await Clips.jpeg()
            let city = ["city": "Halifax$Nova Scotia$CA"]
            let key: HTTPFields = [.idempotencyKey: "upload-1"]
            let first = try await client.upload(photo, fields: city, token: alice.token, headers: key)
            #expect(first.status == .created, "\(first.text)")
            // Each upload gets a new multipart boundary, as clients do.
            let again = try await client.upload(photo, fields: city, token: alice.token, headers: key)
            #expect(again.status == .created)
            #expect(again.headers[.idempotentReplayed] == "true")
            #expect(again.json["id"] as? String == first.json["id"] as? String)
            #expect(try await rowCount("posts", in: services) == 1)
            let other = try await client.upload(photo + [0], fields: city, token: alice.token, headers: key)
            #expect(other.status == .unprocessableContent, "\(other.text)")
            #expect(try await rowCount("posts", in: services) == 1)
            // A refusal is not kept: the corrected upload with the same key runs.
            let retryKey: HTTPFields = [.idempotencyKey: "upload-2"]
            let refused = try await client.upload(photo, fields: [:], token: alice.token, headers: retryKey)
            #expect(refused.status == .badRequest)
            let fixed = try await client.upload(photo, fields: city, token: alice.token, headers: retryKey)
            #expect(fixed.status == .created, "\(fixed.text)")
            #expect(try await rowCount("posts", in: services) == 2)
        }
    }

    @Test("the upload fingerprint does not depend on chunking or on the boundary, only on the content")
    func fingerprint() {
        func hash(_ boundary: String, content: String = "hello", chunk: Int) -> String {
            let body = Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"media\"\r\n\r\n\(content)\r\n--\(boundary)--\r\n"
                    .utf8)
            let fingerprint = UploadFingerprint(method: "POST", path: "/v1/posts", boundary: boundary)
            for start in stride(from: 0, to: body.count, by: chunk) {
                fingerprint.update(ByteBuffer(bytes: body[start..<min(body.count, start + chunk)]))
            }
            return fingerprint.finish()
        }
        let reference = hash("b-1", chunk: 1000)
        for chunk in [1, 2, 3, 7, 64] {
            #expect(hash("b-1", chunk: chunk) == reference)
            #expect(hash("another-boundary-\(chunk)", chunk: chunk) == reference)
        }
        #expect(hash("b-1", content: "hellO", chunk: 5) != reference)
        #expect(UploadFingerprint.boundary(of: "multipart/form-data; boundary=\"x y\"") == "x y")
        #expect(UploadFingerprint.boundary(of: "application/json") == nil)
    }
}
