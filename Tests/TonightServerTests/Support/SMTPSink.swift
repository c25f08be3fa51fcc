import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import TonightServer

#if canImport(Glibc)
    import Glibc
#endif

/// A real SMTP server for a test: `Tests/Mail/smtp_sink.py` (PyPI's aiosmtpd, ``PythonService``),
/// storing what it accepts as JSON files in its own folder.
/// Optional STARTTLS (a fresh self-signed certificate for 127.0.0.1, its PEM in ``caFile``) and
/// AUTH (user `tonight`, password `sink-secret`).
///
/// Without aiosmtpd the tests skip, unless `TONIGHT_TEST_REQUIRE_SMTP` is set (scripts/test sets
/// it after installing aiosmtpd), when they fail.
final class SMTPSink: Sendable {
    static let user = "tonight"
    static let password = "sink-secret"

    let service: PythonService
    /// The certificate the sink presents, as a PEM file (nil without TLS).
    let caFile: String?

    var port: Int { service.port }
    private var directory: URL { service.directory.appendingPathComponent("mail") }

    private init(service: PythonService, caFile: String?) {
        self.service = service
        self.caFile = caFile
    }

    static let available = PythonService.available(["aiosmtpd"], requiredBy: "TONIGHT_TEST_REQUIRE_SMTP")

    /// Runs `body` with a sink, or skips (failing when `TONIGHT_TEST_REQUIRE_SMTP` is set).
    static func with(
        tls: Bool = false, auth: Bool = false, _ body: (SMTPSink) async throws -> Void
    ) async throws {
        guard available else { return }
        let service = try await PythonService.start("Mail/smtp_sink.py") { directory in
            let mail = directory.appendingPathComponent("mail")
            try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
            var arguments = ["--dir", mail.path]
            if tls {
                let (certificate, key) = try selfSignedPEM()
                try certificate.write(
                    to: directory.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
                try key.write(to: directory.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)
                arguments += [
                    "--cert", directory.appendingPathComponent("cert.pem").path,
                    "--key", directory.appendingPathComponent("key.pem").path,
                ]
            }
            if auth { arguments += ["--user", user, "--password", password] }
            return arguments
        }
        let sink = SMTPSink(
            service: service, caFile: tls ? service.directory.appendingPathComponent("cert.pem").path : nil)
        defer { service.stop() }
        try await body(sink)
    }

    /// One message the sink accepted.
    struct Received: Sendable {
        var from: String
        var to: [String]
        var data: String
        var auth: String?
        var tls: Bool
    }

    /// The messages accepted so far, in order.
    func messages() -> [Received] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.first?.isNumber == true && $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return Received(
                from: object["mail_from"] as? String ?? "", to: object["rcpt_tos"] as? [String] ?? [],
                data: object["data"] as? String ?? "", auth: object["auth"] as? String,
                tls: object["tls"] as? Bool ?? false)
        }
    }
}

/// The text part of a rendered mail with quoted-printable soft breaks removed (enough to read
/// links and words; `=XX` escapes stay).
func mailText(_ raw: String) -> String {
    raw.replacingOccurrences(of: "=\r\n", with: "").replacingOccurrences(of: "=\n", with: "")
}

/// The token of the first `#/<screen>/<token>` link in a mail.
func mailToken(_ raw: String, screen: String) -> String? {
    let text = mailText(raw)
    guard let range = text.range(of: "#/\(screen)/") else { return nil }
    let token = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    return token.isEmpty ? nil : String(token)
}

/// A self-signed P-256 certificate for 127.0.0.1 / localhost and its key, as PEM.
func selfSignedPEM() throws -> (certificate: String, key: String) {
    let key = P256.Signing.PrivateKey()
    let name = try DistinguishedName { CommonName("localhost") }
    let now = Date()
    let certificate = try Certificate(
        version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
        notValidBefore: now - 3600, notValidAfter: now + 86_400,
        issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
        extensions: try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            SubjectAlternativeNames([
                .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            ])
        },
        issuerPrivateKey: .init(key)
    )
    return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
}
