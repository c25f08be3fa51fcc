import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import Testing

@testable import TonightServer

/// S3BlobStore against a real S3 implementation: moto's server, with signature checking on.
/// Each test gets its own moto process on its own port.
@Suite(motoAvailable) struct S3BlobStoreMotoTests {
    @Test func contract() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                try await exerciseContract(moto.store(), scratch: scratch)
            }
        }
    }

    @Test func headReportsSizeAndMD5ETag() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                let store = moto.store()
                let bytes = pseudoRandomBytes(count: 3 * 1024 * 1024, seed: 3)
                try writeFile(scratch + "/f", bytes)
                try await store.put(
                    key: "media/2026/11/f.mp4", from: scratch + "/f", contentType: "video/mp4", storageClass: nil)
                let info = try #require(try await store.head(key: "media/2026/11/f.mp4"))
                #expect(info.size == 3 * 1024 * 1024)
                // A single-part upload's ETag is the MD5 of the bytes (quotes stripped).
                #expect(info.etag == SigV4.hex(Insecure.MD5.hash(data: bytes)))
                let range = try await store.get(key: "media/2026/11/f.mp4", range: 100..<200)
                #expect(range.data == Array(bytes[100..<200]))
                #expect(range.totalSize == Int64(bytes.count))
            }
        }
    }

    @Test func listPagesThroughContinuationTokens() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                let store = moto.store()
                try writeFile(scratch + "/f", Array("x".utf8))
                for key in ["media/2026/11/a.mp4", "media/2026/11/b.mp4", "media/2026/12/c.mp4", "other/d.mp4"] {
                    try await store.put(key: key, from: scratch + "/f", contentType: "video/mp4", storageClass: nil)
                }
                let first = try await store.listPage(prefix: "media/2026/11/", continuationToken: nil, maxKeys: 1)
                #expect(first.keys == ["media/2026/11/a.mp4"])
                let token = try #require(first.nextContinuationToken)
                let second = try await store.listPage(prefix: "media/2026/11/", continuationToken: token, maxKeys: 1)
                #expect(second.keys == ["media/2026/11/b.mp4"])
                #expect(second.nextContinuationToken == nil)

                #expect(
                    try await store.list(prefix: "media/2026/11/", maxKeys: 1) == [
                        "media/2026/11/a.mp4", "media/2026/11/b.mp4",
                    ])
                #expect(try await store.list(prefix: "media/", maxKeys: 1).count == 3)
                #expect(try await store.list(prefix: "").count == 4)
                #expect(try await store.list(prefix: "nothing/") == [])
            }
        }
    }

    @Test func presignedGETWorksWithAPlainRequest() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                let store = moto.store()
                let bytes = pseudoRandomBytes(count: 300_000, seed: 9)
                try writeFile(scratch + "/f", bytes)
                try await store.put(
                    key: "media/2026/11/p.mp4", from: scratch + "/f", contentType: "video/mp4", storageClass: nil)
                let url = store.presignedGET(key: "media/2026/11/p.mp4", expires: 300)
                #expect(
                    url.absoluteString.hasPrefix("\(moto.endpoint.absoluteString)/\(moto.bucket)/media/2026/11/p.mp4?"))
                #expect(url.query?.contains("X-Amz-Signature=") == true)

                // moto never checks presigned signatures, and with its auth switched on it fails any
                // request without an Authorization header (500), so switch auth off for this GET.
                // The signature itself is checked against AWS's vector and botocore (below).
                try await moto.setAuthentication(enabled: false)
                let request = HTTPClientRequest(url: url.absoluteString)  // no Authorization header
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 10 << 20)
                #expect(response.status == .ok)
                #expect(digest(Array(buffer: body)) == digest(bytes))
                #expect(response.headers.first(name: "Content-Type") == "video/mp4")
            }
        }
    }

    /// botocore (AWS's own Python signer, installed with moto) presigns the same path-style URL
    /// with a port at the same instant: the signatures must agree.
    @Test func presignedSignatureMatchesBotocore() async throws {
        let store = S3BlobStore(
            configuration: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:9000")!, bucket: "media-bucket", region: "eu-west-1",
                accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            httpClient: .shared)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let url = store.presignedGET(key: "media/2026/11/0b7e_x-1.mp4", expires: 3600, now: now)
        let script = """
            import datetime, sys
            import botocore.auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            url, key, secret, region, stamp, expires = sys.argv[1:]
            fixed = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")
            botocore.auth.get_current_datetime = lambda *a, **k: fixed
            request = AWSRequest(method="GET", url=url)
            botocore.auth.S3SigV4QueryAuth(Credentials(key, secret), "s3", region, expires=int(expires)).add_auth(request)
            print(request.url)
            """
        let botocoreURL = try await MotoServer.runPython(
            script,
            arguments: [
                "http://127.0.0.1:9000/media-bucket/media/2026/11/0b7e_x-1.mp4", "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "eu-west-1", SigV4.timestamps(now).amzDate, "3600",
            ]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        func signature(_ s: String) -> String? {
            URLComponents(string: s)?.queryItems?.first { $0.name == "X-Amz-Signature" }?.value
        }
        let ours = try #require(signature(url.absoluteString))
        #expect(ours.count == 64)
        #expect(ours == signature(botocoreURL), "ours: \(url.absoluteString)\nbotocore: \(botocoreURL)")
    }

    @Test func wrongSecretIsRefusedWith403() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                try writeFile(scratch + "/f", Array("secret".utf8))
                try await moto.store().put(
                    key: "a.txt", from: scratch + "/f", contentType: "text/plain", storageClass: nil)
                let bad = moto.store(secret: moto.credentials.secretAccessKey + "x")
                func is403(_ error: any Error) -> Bool {
                    if case BlobError.server(status: 403, _) = error { return true }
                    return false
                }
                await #expect(performing: { try await bad.get(key: "a.txt", range: nil) }, throws: is403)
                await #expect(performing: { try await bad.head(key: "a.txt") }, throws: is403)
                await #expect(performing: { try await bad.list(prefix: "") }, throws: is403)
                await #expect(
                    performing: {
                        try await bad.put(
                            key: "b.txt", from: scratch + "/f", contentType: "text/plain", storageClass: nil)
                    }, throws: is403)
                do {
                    _ = try await bad.get(key: "a.txt", range: nil)
                } catch BlobError.server(_, let message) {
                    #expect(message.contains("SignatureDoesNotMatch"))
                }
                // The right secret still works, and the refused put stored nothing.
                #expect(try await moto.store().get(key: "a.txt", range: nil).data == Array("secret".utf8))
                #expect(try await moto.store().head(key: "b.txt") == nil)
            }
        }
    }

    @Test func storageClassRoundTrips() async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withTemporaryDirectory { (scratch: String) async throws in
                let store = moto.store()
                try writeFile(scratch + "/f", Array(repeating: 1, count: 1000))
                try await store.put(
                    key: "cold.bin", from: scratch + "/f", contentType: "application/octet-stream",
                    storageClass: "REDUCED_REDUNDANCY")
                try await store.put(
                    key: "hot.bin", from: scratch + "/f", contentType: "application/octet-stream", storageClass: nil)
                #expect(try await store.storageClass(key: "cold.bin") == "REDUCED_REDUNDANCY")
                #expect(try await store.storageClass(key: "hot.bin") == "STANDARD")
                #expect(try await store.storageClass(key: "missing.bin") == nil)
            }
        }
    }

}

/// No server needed: validation happens before any request.
@Suite struct S3BlobStoreOfflineTests {
    @Test func invalidKeysNeverReachTheServer() async throws {
        let store = S3BlobStore(
            configuration: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:1")!, bucket: "b", region: "us-east-1",
                accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "x"),
            httpClient: .shared)
        for key in ["../a", "/a", "a/../b", "a b"] {
            await #expect(throws: BlobError.invalidKey) { try await store.get(key: key, range: nil) }
            await #expect(throws: BlobError.invalidKey) { try await store.head(key: key) }
            await #expect(throws: BlobError.invalidKey) { try await store.delete(key: key) }
            await #expect(throws: BlobError.invalidKey) {
                try await store.put(key: key, from: "/dev/null", contentType: "x/y", storageClass: nil)
            }
        }
        await #expect(throws: BlobError.invalidKey) { try await store.list(prefix: "../") }
    }
}
