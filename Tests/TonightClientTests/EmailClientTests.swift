import Foundation
import Testing
import TonightClient
import TonightServer

@Suite("Swift SDK: email verification, change and password reset")
struct EmailClientTests {
    /// Runs the queued mail jobs and returns the token of the newest `#/<screen>/…` link mailed
    /// to `address` (the server writes mail into its mail folder without SMTP_URL).
    private func link(to address: String, screen: String, services: AppServices) async throws -> String {
        let worker = JobWorker(queue: services.jobs, handlers: services.jobHandlers, logger: services.logger)
        while try await worker.runOnce() > 0 {}
        let folder = services.config.mailFolder
        let mails = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map {
            try String(contentsOfFile: folder + "/" + $0, encoding: .utf8).replacingOccurrences(of: "=\r\n", with: "")
        }
        let mail = try #require(mails.last { $0.contains("<\(address)>") && $0.contains("#/\(screen)/") })
        let start = try #require(mail.range(of: "#/\(screen)/")).upperBound
        return String(mail[start...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test("verify, change the address, forget the password and reset it")
    func flows() async throws {
        try await withServer { services, url in
            let tonight = TonightClient(serverURL: url)
            let me = try await tonight.signUp(
                username: "nina", email: "nina@example.com", password: "a long enough passphrase")
            #expect(me.emailVerified == false)
            let verified = try await tonight.verifyEmail(
                token: try await link(to: "nina@example.com", screen: "verify-email", services: services))
            #expect(verified == "nina@example.com")
            #expect(try await tonight.me().emailVerified == true)
            await #expect(throws: TonightError.self) { try await tonight.sendEmailVerification() }

            try await tonight.changeEmail(to: "nina@tonight.example", password: "a long enough passphrase")
            #expect(try await tonight.me().pendingEmail == "nina@tonight.example")
            try await tonight.verifyEmail(
                token: try await link(to: "nina@tonight.example", screen: "verify-email", services: services))
            #expect(try await tonight.me().email == "nina@tonight.example")

            try await tonight.requestPasswordReset(email: "nina@tonight.example")
            let reset = try await link(to: "nina@tonight.example", screen: "reset-password", services: services)
            try await tonight.resetPassword(token: reset, newPassword: "the new passphrase")
            #expect(await !tonight.isSignedIn)
            do {
                try await tonight.resetPassword(token: reset, newPassword: "the new passphrase")
                Issue.record("a used reset link worked again")
            } catch let error as TonightError {
                #expect(error.errorCode == .invalidLink)
            }
            _ = try await tonight.logIn(username: "nina", password: "the new passphrase")
        }
    }
}
