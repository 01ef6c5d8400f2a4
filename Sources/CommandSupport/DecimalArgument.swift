/// A number as a person types it on a command line.
///
/// Swift's `Double(String)` also reads hexadecimal ("0x10" is 16), "inf", "nan" and values past `Double`'s range
/// (as infinity); none of them is a sensible option value, so every command's numbers come through here.
public enum DecimalArgument {
    /// The finite decimal number `text` spells (optional sign, digits, point, exponent), or nil.
    public static func parse(_ text: String) -> Double? {
        guard !text.isEmpty,
              text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
              let value = Double(text), value.isFinite
        else { return nil }
        return value
    }
}
