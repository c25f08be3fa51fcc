/// Well-known passwords of ten characters or more (shorter ones are refused by length anyway),
/// from public breach top lists. Compared lower-cased.
enum CommonPasswords {
    static let all: Set<String> = [
        "1234567890", "0123456789", "9876543210", "0987654321", "1234567891", "123456789a", "a123456789",
        "12345678910", "123456789012", "1234512345", "1122334455", "1234554321", "1231231234",
        "123123123123", "1111111111", "0000000000", "2222222222", "5555555555", "7777777777", "9999999999",
        "qwertyuiop", "qwertyuiop123", "qwerty1234", "qwerty12345", "qwerty123456", "1234qwerty",
        "1q2w3e4r5t", "1q2w3e4r5t6y", "q1w2e3r4t5", "1qaz2wsx3edc", "zaq12wsxcde3", "zaq1xsw2cde3",
        "asdfghjkl1", "asdfghjkl;", "asdfghjkl123", "zxcvbnm123", "zxcvbnmasdf", "qazwsxedcrfv",
        "password12", "password01", "password123", "password1234", "password12345", "passw0rd123",
        "p@ssword123", "p@ssw0rd123", "passwordpassword", "mypassword", "mypassword1", "mypassword123",
        "iloveyou12", "iloveyou123", "iloveyou1234", "abcdefghij", "abcdefghijk", "abc1234567",
        "abcd123456", "abcde12345", "a1b2c3d4e5", "letmein123", "letmeinnow", "welcome123", "welcome1234",
        "princess123", "sunshine123", "trustno1234", "michael123", "superman123", "batman1234",
        "monkey1234", "dragon1234", "master1234", "football123", "football12", "baseball123",
        "basketball", "basketball1", "basketball123", "soccer1234", "hockey1234", "changeme123",
        "administrator", "adminadmin", "admin12345", "admin123456", "computer123", "internet123",
        "starwars123", "pokemon123", "whatever123", "charlie123", "jennifer123", "liverpool1",
        "liverpool123", "chelsea123", "arsenal123", "manchester", "manchester1", "barcelona1",
        "realmadrid", "blink18212", "myspace123", "facebook123", "instagram1", "google1234",
        "samsung123", "iphone1234", "apple12345", "microsoft1", "trustno1trustno1", "q1w2e3r4t5y6",
        "qwerty123qwerty", "loveyou123", "lovelove12", "ilovemyself", "iloveyouforever", "goodluck123",
        "secret1234", "secretpassword", "test123456", "testtest123", "default123", "guest12345",
        "summer2024", "summer2025", "summer2026", "winter2024", "winter2025", "winter2026",
        "spring2025", "autumn2025", "january2025", "tonight123", "partytime1", "party12345",
    ]
}
