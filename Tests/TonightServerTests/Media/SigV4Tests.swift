import Foundation
import Testing

@testable import TonightServer

/// AWS's published examples from "Authenticating Requests: Using the Authorization Header"
/// and "Authenticating Requests: Using Query Parameters" (S3 SigV4 documentation).
@Suite struct SigV4Tests {
    static let credentials = SigV4.Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE",
        secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    )
    /// 20130524T000000Z
    static let date = Date(timeIntervalSince1970: 1_369_353_600)

    @Test func timestampFormat() {
        let (amzDate, day) = SigV4.timestamps(Self.date)
        #expect(amzDate == "20130524T000000Z")
        #expect(day == "20130524")
    }

    @Test func getObjectExample() {
        let signed = SigV4.sign(
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            headers: [("Range", "bytes=0-9")],
            payloadHash: SigV4.emptyPayloadHash,
            region: "us-east-1",
            credentials: Self.credentials,
            date: Self.date
        )
        #expect(
            signed.canonicalRequest == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            signed.stringToSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
        #expect(signed.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(
            signed.authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// PUT Object example: exercises path encoding ("$" → %24) and a signed x-amz-storage-class.
    @Test func putObjectExample() {
        let body = Array("Welcome to Amazon S3.".utf8)
        let hash = SigV4.hexSHA256(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let signed = SigV4.sign(
            method: "PUT",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test$file.text",
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payloadHash: hash,
            region: "us-east-1",
            credentials: Self.credentials,
            date: Self.date
        )
        #expect(signed.canonicalRequest.hasPrefix("PUT\n/test%24file.text\n\n"))
        #expect(signed.signedHeaders == "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class")
        #expect(signed.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    /// GET Bucket (List Objects) example: exercises the sorted canonical query string.
    @Test func listObjectsExample() {
        let signed = SigV4.sign(
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/",
            query: [("prefix", "J"), ("max-keys", "2")],
            payloadHash: SigV4.emptyPayloadHash,
            region: "us-east-1",
            credentials: Self.credentials,
            date: Self.date
        )
        #expect(signed.canonicalRequest.hasPrefix("GET\n/\nmax-keys=2&prefix=J\n"))
        #expect(signed.signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func presignedURLExample() {
        let presigned = SigV4.presign(
            method: "GET",
            scheme: "https",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            region: "us-east-1",
            credentials: Self.credentials,
            date: Self.date,
            expires: 86400
        )
        #expect(
            presigned.canonicalRequest == """
                GET
                /test.txt
                X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
                host:examplebucket.s3.amazonaws.com

                host
                UNSIGNED-PAYLOAD
                """)
        #expect(presigned.signature == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        #expect(
            presigned.url.absoluteString
                == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func uriEncodingRules() {
        #expect(SigV4.uriEncode("a-b_c.d~e") == "a-b_c.d~e")
        #expect(SigV4.uriEncode("a b/c+d=é") == "a%20b%2Fc%2Bd%3D%C3%A9")
        #expect(SigV4.canonicalURI("/bucket/media/2026/a b.mp4") == "/bucket/media/2026/a%20b.mp4")
        #expect(SigV4.canonicalURI("") == "/")
        #expect(SigV4.canonicalQueryString([("b", "2"), ("a", "x y"), ("a", "1")]) == "a=1&a=x%20y&b=2")
    }

    /// S3BlobStore builds path-style URLs and a Host header with the port.
    @Test func s3StorePresignsPathStyle() {
        let store = S3BlobStore(
            configuration: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:9000")!, bucket: "bucket", region: "us-east-1",
                accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            httpClient: .shared)
        let url = store.presignedGET(key: "media/2026/11/x.mp4", expires: 60, now: Self.date)
        #expect(url.absoluteString.hasPrefix("http://127.0.0.1:9000/bucket/media/2026/11/x.mp4?X-Amz-Algorithm="))
        #expect(url.absoluteString.contains("X-Amz-Expires=60&"))
        let expected = SigV4.presign(
            method: "GET", scheme: "http", host: "127.0.0.1:9000", path: "/bucket/media/2026/11/x.mp4",
            region: "us-east-1", credentials: Self.credentials, date: Self.date, expires: 60)
        #expect(url == expected.url)
    }
}
