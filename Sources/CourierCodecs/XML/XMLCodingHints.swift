public import Courier

/// The hint key behind ``Courier/CodingHints/xmlArrayLayout``.
enum XMLArrayLayoutHint: OptionKey {
    static let defaultValue: XMLCodec.ArrayLayout? = nil
}

extension CodingHints {
    /// How ``XMLCodec`` lays out arrays for this encode — per endpoint through
    /// `Endpoint.requestHints` — replacing the codec's ``XMLCodec/Options/arrayItemName``;
    /// `nil` (the default) keeps the codec's. Decoding reads either layout by the shape.
    ///
    /// ```swift
    /// var upload = Endpoint(name: "upload", module: legacy, method: .post, path: "/batch", body: batch)
    /// upload.requestFormat = .xml
    /// upload.requestHints.rootName = "batch"
    /// upload.requestHints.xmlArrayLayout = .wrapped(.dropTrailingS)
    /// ```
    public var xmlArrayLayout: XMLCodec.ArrayLayout? {
        get { self[XMLArrayLayoutHint.self] }
        set { self[XMLArrayLayoutHint.self] = newValue }
    }
}
