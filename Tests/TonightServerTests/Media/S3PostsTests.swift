import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import TonightServer

/// The whole post flow with media on S3 (moto's server, signatures checked): upload, processing,
/// serving by a presigned redirect, deletion.
@Suite(motoAvailable) struct S3PostsTests {
    @Test("posts store, process, serve and delete their media on S3", arguments: Backend.available)
    func postsOnS3(_ backend: Backend) async throws {
        try await withMoto { (moto: MotoServer) async throws in
            try await withApp(
                backend,
                configure: { config in
                    config.mediaStorage = "s3"
                    config.s3Endpoint = moto.endpoint.absoluteString
                    config.s3Bucket = moto.bucket
                    config.s3AccessKey = moto.credentials.accessKeyID
                    config.s3SecretKey = moto.credentials.secretAccessKey
                    config.s3StorageClass = "REDUCED_REDUNDANCY"
                }
            ) { services, client in
                #expect(services.posts.blobs is S3BlobStore)
                let alice = try await client.member("alice")
                let created = try await client.upload(
                    try await Clips.mp4(), fields: ["city": "Halifax$Nova Scotia$CA"], token: alice.token)
                #expect(created.status == .created, "\(created.text)")
                let id = created.json["id"] as? String ?? ""
                let worker = JobWorker(
                    queue: services.jobs, handlers: services.jobHandlers, kinds: .except([MailJob.kind]),
                    logger: services.logger)
                #expect(try await worker.runOnce() == 1)
                let post = try await client.send(.get, "/v1/posts/\(id)").json
                #expect(post["status"] as? String == "ready", "\(post)")
                let keys = try await services.posts.blobs.list(prefix: "posts/")
                #expect(keys == ["posts/\(id)/poster.jpg", "posts/\(id)/video.mp4"])
                let s3 = try #require(services.posts.blobs as? S3BlobStore)
                #expect(try await s3.storageClass(key: "posts/\(id)/video.mp4") == "REDUCED_REDUNDANCY")
                // The media URL redirects to a presigned S3 URL that serves the bytes, with ranges.
                let url = (post["media"] as? JSON)?["url"] as? String ?? ""
                let redirect = try await client.send(.get, url)
                #expect(redirect.status == .found)
                let location = try #require(redirect.headers[.location])
                #expect(location.hasPrefix(moto.endpoint.absoluteString) && location.contains("X-Amz-Signature="))
                // moto fails unauthenticated requests (500) while its auth is on and never checks
                // presigned signatures (ours are checked against AWS's vector and botocore in
                // S3BlobStoreMotoTests), so auth goes off for the plain GET a browser would make.
                try await moto.setAuthentication(enabled: false)
                var request = HTTPClientRequest(url: location)
                request.headers.add(name: "Range", value: "bytes=0-99")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                #expect(response.status.code == 206)
                let body = try await response.body.collect(upTo: 1 << 20)
                #expect(body.readableBytes == 100)
                #expect(String(decoding: Array(body.readableBytesView)[4..<8], as: UTF8.self) == "ftyp")
                try await moto.setAuthentication(enabled: true)
                #expect(try await client.send(.delete, "/v1/posts/\(id)", token: alice.token).status == .noContent)
                #expect(try await services.posts.blobs.list(prefix: "posts/").isEmpty)
            }
        }
    }
}
