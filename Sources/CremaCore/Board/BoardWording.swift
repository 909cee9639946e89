/// The board's few words in each language Crema writes; the numbers and the wait carry the meaning, so a customer
/// who reads another language still reads the board.
struct BoardWording: Sendable {
    var ready: String
    var making: String
    var nothingReady: String
    var nothingMaking: String
    var minutes: @Sendable (Int) -> String
    var about: @Sendable (String) -> String

    init(_ language: ActivityLanguage) {
        switch language {
        case .english:
            ready = "Ready"
            making = "Making"
            nothingReady = "Nothing ready yet"
            nothingMaking = "No orders waiting"
            minutes = { "\($0) min" }
            about = { "about \($0)" }
        case .spanish:
            ready = "Listos"
            making = "En preparación"
            nothingReady = "Nada listo aún"
            nothingMaking = "Sin pedidos en espera"
            minutes = { "\($0) min" }
            about = { "unos \($0)" }
        case .japanese:
            ready = "お渡し可"
            making = "準備中"
            nothingReady = "まだありません"
            nothingMaking = "待ちなし"
            minutes = { "\($0)分" }
            about = { "約\($0)" }
        }
    }
}
