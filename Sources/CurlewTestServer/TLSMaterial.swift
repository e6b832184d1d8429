import Foundation
import NIOSSL

extension TestServer {
    /// Filesystem path of the test CA certificate (`ca.pem`) that signed the TLS listener's certificate:
    /// give it to clients as their CA bundle (`curl --cacert`, `CURLOPT_CAINFO`).
    ///
    /// The certificate covers `127.0.0.1` and `localhost`. The files are a SwiftPM resource of this
    /// target (`Bundle.module`); set `CURLEW_TEST_SERVER_CERTIFICATES` to a directory holding `ca.pem`,
    /// `server.pem` and `server.key` to use others (or to run a copied executable without its bundle).
    public static var caCertificatePath: String {
        TLSMaterial.path(of: "ca.pem")
    }

    /// Filesystem path of the CA certificate (`fault-ca.pem`) that signed the ``TLSFault/wrongHost`` and
    /// ``TLSFault/expired`` certificates: a client trusting it fails on those only because of the host
    /// name or the date.
    public static var faultCACertificatePath: String {
        TLSMaterial.path(of: "fault-ca.pem")
    }

    /// A client certificate (PEM) that the mutual-TLS listener (``mutualTLSBaseURL``) accepts.
    public static var clientCertificatePath: String {
        TLSMaterial.path(of: "client.pem")
    }

    /// The private key (PEM) of ``clientCertificatePath``.
    public static var clientKeyPath: String {
        TLSMaterial.path(of: "client.key")
    }

    /// A self-signed client certificate (PEM) that the mutual-TLS listener refuses.
    public static var untrustedClientCertificatePath: String {
        TLSMaterial.path(of: "stranger.pem")
    }

    /// The private key (PEM) of ``untrustedClientCertificatePath``.
    public static var untrustedClientKeyPath: String {
        TLSMaterial.path(of: "stranger.key")
    }
}

extension TestServer {
    /// The public-key pin of the TLS listener's certificate: the Base64 SHA-256 of its
    /// `SubjectPublicKeyInfo`, as `CURLOPT_PINNEDPUBLICKEY` takes it after `sha256//`.
    ///
    /// Computed once from `Certificates/server.pem` (and to be computed again if it is replaced):
    ///
    /// ```sh
    /// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
    ///     | openssl dgst -sha256 -binary | openssl enc -base64
    /// ```
    public static let serverPublicKeyPin = "Wf4bBf4x/0xV4gH/SPAqSECNHonuvixWyoHbDXfDSYM="

    /// The pin of the test CA's key (`Certificates/ca.pem`, same command): a key the server does
    /// *not* have, for a pin that must fail.
    public static let caPublicKeyPin = "dvYYNwz4hD6hRWtLZ0xxWOSJVQU7fP6DHuHuQxLoQDM="
}

/// Where the committed test certificates live and how the TLS listener uses them.
enum TLSMaterial {
    static let directory: String = {
        if let override = ProcessInfo.processInfo.environment["CURLEW_TEST_SERVER_CERTIFICATES"], !override.isEmpty {
            return override
        }
        // `.copy("Certificates")` keeps the directory inside the resource bundle.
        let bundle = Bundle.module
        if let url = bundle.url(forResource: "Certificates", withExtension: nil) {
            return url.path
        }
        return (bundle.resourcePath ?? bundle.bundlePath) + "/Certificates"
    }()

    static func path(of file: String) -> String {
        directory + "/" + file
    }

    /// The server context every TLS listener in the process shares (loaded once: tests start many servers).
    static let serverContext: Result<NIOSSLContext, any Error> = Result { try makeServerContext() }

    /// The contexts of the TLS fault listeners, loaded once.
    static let faultContexts: Result<[TLSFault: NIOSSLContext], any Error> = Result {
        var contexts: [TLSFault: NIOSSLContext] = [:]
        for fault in TLSFault.allCases {
            guard let files = fault.certificateFiles else { continue }
            contexts[fault] = try makeServerContext(certificate: files.certificate, key: files.key)
        }
        return contexts
    }

    /// The mutual-TLS listener's context: the server's certificate, and client certificates
    /// required and verified against `client-ca.pem` only.
    static let mutualContext: Result<NIOSSLContext, any Error> = Result {
        try makeServerContext { configuration in
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .file(path(of: "client-ca.pem"))
        }
    }

    /// The HTTP/1.1-only listener's context: the server's certificate, ALPN `http/1.1` alone.
    static let http1Context: Result<NIOSSLContext, any Error> = Result {
        try makeServerContext { configuration in
            configuration.applicationProtocols = ["http/1.1"]
        }
    }

    /// A server context with ALPN `h2` then `http/1.1`, then whatever `adjust` changes.
    static func makeServerContext(
        certificate: String = "server.pem", key keyFile: String = "server.key",
        adjusting adjust: (inout TLSConfiguration) -> Void = { _ in }
    ) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(path(of: certificate))
        let key = try NIOSSLPrivateKey(file: path(of: keyFile), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = ["h2", "http/1.1"]
        // How long a close waits for the client's close_notify (NIOSSL's default is 5 s). Every close of an
        // idle TLS connection at shutdown waits this long, so keep it short: tests start many servers.
        configuration.shutdownTimeout = .milliseconds(100)
        adjust(&configuration)
        return try NIOSSLContext(configuration: configuration)
    }
}
