// The words of the pages a host lands on after authorizing a provider (GET and POST /oauth/<provider>/callback), in all eleven locales.
import type { Locale } from "../domain/locales.js";

/*
 * Placeholders: {provider} the provider's name as people know it (Google, Zoom, Microsoft), {error} the provider's
 * error code; in the confirmation, {providerAccount} the provider account's address, {name} and {email} the
 * scheduling account's.
 */
const en = {
  connectedTitle: "Connected",
  connectedText: "Your {provider} account is connected. You can close this page.",
  failedTitle: "Not connected",
  deniedText: "{provider} was not connected because access was not allowed.",
  stateText: "This link to finish connecting is unknown, has expired or was already used. Start connecting again.",
  codeText: "{provider} did not accept the authorization. Start connecting again.",
  providerErrorText: "{provider} answered with an error ({error}). Start connecting again.",
  unreachableText: "{provider} could not be reached to finish connecting. Try again in a few minutes.",
  notConfiguredText: "{provider} cannot be connected on this service at the moment.",
  confirmTitle: "Connect {provider}?",
  confirmText: "Connect the {provider} account {providerAccount} to the scheduling account of {name} ({email})?",
  confirmWarning: "Only connect if that scheduling account is yours: its bookings will use this {provider} account. If someone else sent you this link, choose “Don't connect”.",
  confirmButton: "Connect",
  declineButton: "Don't connect",
  declinedText: "{provider} was not connected, and the access you just gave was withdrawn.",
};

type OAuthMessages = typeof en;

const fr: OAuthMessages = {
  connectedTitle: "Connecté",
  connectedText: "Votre compte {provider} est connecté. Vous pouvez fermer cette page.",
  failedTitle: "Non connecté",
  deniedText: "{provider} n'a pas été connecté, car l'accès n'a pas été autorisé.",
  stateText: "Ce lien pour terminer la connexion est inconnu, a expiré ou a déjà été utilisé. Recommencez la connexion.",
  codeText: "{provider} n'a pas accepté l'autorisation. Recommencez la connexion.",
  providerErrorText: "{provider} a répondu par une erreur ({error}). Recommencez la connexion.",
  unreachableText: "{provider} n'a pas pu être joint pour terminer la connexion. Réessayez dans quelques minutes.",
  notConfiguredText: "{provider} ne peut pas être connecté à ce service pour le moment.",
  confirmTitle: "Connecter {provider} ?",
  confirmText: "Connecter le compte {provider} {providerAccount} au compte de planification de {name} ({email}) ?",
  confirmWarning: "Ne connectez que si ce compte de planification est le vôtre : ses réservations utiliseront ce compte {provider}. Si quelqu'un d'autre vous a envoyé ce lien, choisissez « Ne pas connecter ».",
  confirmButton: "Connecter",
  declineButton: "Ne pas connecter",
  declinedText: "{provider} n'a pas été connecté, et l'accès que vous venez de donner a été retiré.",
};

const de: OAuthMessages = {
  connectedTitle: "Verbunden",
  connectedText: "Ihr {provider}-Konto ist verbunden. Sie können diese Seite schließen.",
  failedTitle: "Nicht verbunden",
  deniedText: "{provider} wurde nicht verbunden, weil der Zugriff nicht erlaubt wurde.",
  stateText: "Dieser Link zum Abschließen der Verbindung ist unbekannt, abgelaufen oder wurde schon benutzt. Beginnen Sie die Verbindung neu.",
  codeText: "{provider} hat die Autorisierung nicht angenommen. Beginnen Sie die Verbindung neu.",
  providerErrorText: "{provider} hat mit einem Fehler geantwortet ({error}). Beginnen Sie die Verbindung neu.",
  unreachableText: "{provider} war zum Abschließen der Verbindung nicht erreichbar. Versuchen Sie es in ein paar Minuten erneut.",
  notConfiguredText: "{provider} kann mit diesem Dienst zurzeit nicht verbunden werden.",
  confirmTitle: "{provider} verbinden?",
  confirmText: "Das {provider}-Konto {providerAccount} mit dem Terminkonto von {name} ({email}) verbinden?",
  confirmWarning: "Verbinden Sie nur, wenn dieses Terminkonto Ihres ist: Seine Buchungen nutzen dann dieses {provider}-Konto. Hat Ihnen jemand anderes diesen Link geschickt, wählen Sie „Nicht verbinden“.",
  confirmButton: "Verbinden",
  declineButton: "Nicht verbinden",
  declinedText: "{provider} wurde nicht verbunden, und der eben erteilte Zugriff wurde zurückgenommen.",
};

const es: OAuthMessages = {
  connectedTitle: "Conectado",
  connectedText: "Tu cuenta de {provider} está conectada. Ya puedes cerrar esta página.",
  failedTitle: "Sin conectar",
  deniedText: "{provider} no se ha conectado porque no se permitió el acceso.",
  stateText: "Este enlace para terminar la conexión es desconocido, ha caducado o ya se usó. Vuelve a empezar la conexión.",
  codeText: "{provider} no aceptó la autorización. Vuelve a empezar la conexión.",
  providerErrorText: "{provider} respondió con un error ({error}). Vuelve a empezar la conexión.",
  unreachableText: "No se pudo contactar con {provider} para terminar la conexión. Inténtalo de nuevo en unos minutos.",
  notConfiguredText: "{provider} no se puede conectar a este servicio en este momento.",
  confirmTitle: "¿Conectar {provider}?",
  confirmText: "¿Conectar la cuenta de {provider} {providerAccount} a la cuenta de citas de {name} ({email})?",
  confirmWarning: "Conecta solo si esa cuenta de citas es tuya: sus reservas usarán esta cuenta de {provider}. Si otra persona te envió este enlace, elige «No conectar».",
  confirmButton: "Conectar",
  declineButton: "No conectar",
  declinedText: "{provider} no se conectó y el acceso que acabas de dar se retiró.",
};

const nl: OAuthMessages = {
  connectedTitle: "Verbonden",
  connectedText: "Je {provider}-account is verbonden. Je kunt deze pagina sluiten.",
  failedTitle: "Niet verbonden",
  deniedText: "{provider} is niet verbonden, omdat je geen toegang hebt gegeven.",
  stateText: "Deze link om het verbinden af te ronden is onbekend, verlopen of al gebruikt. Begin opnieuw met verbinden.",
  codeText: "{provider} heeft de autorisatie niet geaccepteerd. Begin opnieuw met verbinden.",
  providerErrorText: "{provider} antwoordde met een fout ({error}). Begin opnieuw met verbinden.",
  unreachableText: "{provider} was niet bereikbaar om het verbinden af te ronden. Probeer het over een paar minuten opnieuw.",
  notConfiguredText: "{provider} kan op dit moment niet met deze dienst worden verbonden.",
  confirmTitle: "{provider} koppelen?",
  confirmText: "Het {provider}-account {providerAccount} koppelen aan het planningsaccount van {name} ({email})?",
  confirmWarning: "Koppel alleen als dat planningsaccount van u is: de boekingen ervan gebruiken dan dit {provider}-account. Heeft iemand anders u deze link gestuurd, kies dan ‘Niet koppelen’.",
  confirmButton: "Koppelen",
  declineButton: "Niet koppelen",
  declinedText: "{provider} is niet gekoppeld, en de toegang die u zojuist gaf is ingetrokken.",
};

const ru: OAuthMessages = {
  connectedTitle: "Подключено",
  connectedText: "Ваш аккаунт {provider} подключён. Эту страницу можно закрыть.",
  failedTitle: "Не подключено",
  deniedText: "{provider} не подключён, так как доступ не был разрешён.",
  stateText: "Эта ссылка для завершения подключения неизвестна, устарела или уже использована. Начните подключение заново.",
  codeText: "{provider} не принял авторизацию. Начните подключение заново.",
  providerErrorText: "{provider} ответил ошибкой ({error}). Начните подключение заново.",
  unreachableText: "Не удалось связаться с {provider}, чтобы завершить подключение. Попробуйте снова через несколько минут.",
  notConfiguredText: "{provider} сейчас нельзя подключить к этому сервису.",
  confirmTitle: "Подключить {provider}?",
  confirmText: "Подключить аккаунт {provider} {providerAccount} к аккаунту записи {name} ({email})?",
  confirmWarning: "Подключайте, только если этот аккаунт записи ваш: его бронирования будут использовать этот аккаунт {provider}. Если эту ссылку прислал вам кто-то другой, выберите «Не подключать».",
  confirmButton: "Подключить",
  declineButton: "Не подключать",
  declinedText: "{provider} не подключён, а только что выданный доступ отозван.",
};

const zh: OAuthMessages = {
  connectedTitle: "已连接",
  connectedText: "你的 {provider} 账户已连接。你可以关闭此页面。",
  failedTitle: "未连接",
  deniedText: "{provider} 未连接，因为未允许访问。",
  stateText: "此完成连接的链接未知、已过期或已被使用。请重新开始连接。",
  codeText: "{provider} 未接受此授权。请重新开始连接。",
  providerErrorText: "{provider} 返回了错误（{error}）。请重新开始连接。",
  unreachableText: "无法联系 {provider} 来完成连接。请几分钟后再试。",
  notConfiguredText: "目前无法将 {provider} 连接到此服务。",
  confirmTitle: "连接 {provider}？",
  confirmText: "将 {provider} 账户 {providerAccount} 连接到 {name}（{email}）的预约账户吗？",
  confirmWarning: "只有当该预约账户属于你时才连接：它的预约将使用这个 {provider} 账户。如果这个链接是别人发给你的，请选择“不连接”。",
  confirmButton: "连接",
  declineButton: "不连接",
  declinedText: "{provider} 未连接，你刚才授予的访问权限已被撤销。",
};

const ja: OAuthMessages = {
  connectedTitle: "接続しました",
  connectedText: "{provider} アカウントを接続しました。このページは閉じてかまいません。",
  failedTitle: "接続されていません",
  deniedText: "アクセスが許可されなかったため、{provider} は接続されませんでした。",
  stateText: "接続を完了するこのリンクは不明か、期限切れか、すでに使われています。もう一度接続を始めてください。",
  codeText: "{provider} が認可を受け付けませんでした。もう一度接続を始めてください。",
  providerErrorText: "{provider} がエラーを返しました（{error}）。もう一度接続を始めてください。",
  unreachableText: "接続を完了するために {provider} に接続できませんでした。数分後にもう一度お試しください。",
  notConfiguredText: "現在、このサービスに {provider} を接続することはできません。",
  confirmTitle: "{provider} を連携しますか？",
  confirmText: "{provider} アカウント {providerAccount} を {name}（{email}）の予約アカウントに連携しますか？",
  confirmWarning: "その予約アカウントがご自身のものである場合にのみ連携してください。予約にはこの {provider} アカウントが使われます。ほかの人からこのリンクが送られてきた場合は「連携しない」を選んでください。",
  confirmButton: "連携する",
  declineButton: "連携しない",
  declinedText: "{provider} は連携されず、いま許可したアクセスは取り消されました。",
};

const ar: OAuthMessages = {
  connectedTitle: "تم الربط",
  connectedText: "تم ربط حسابك في {provider}. يمكنك إغلاق هذه الصفحة.",
  failedTitle: "لم يتم الربط",
  deniedText: "لم يتم ربط {provider} لأن الوصول لم يُسمح به.",
  stateText: "رابط إكمال الربط هذا غير معروف أو منتهي الصلاحية أو استُخدم من قبل. ابدأ الربط من جديد.",
  codeText: "لم يقبل {provider} التفويض. ابدأ الربط من جديد.",
  providerErrorText: "ردّ {provider} بخطأ ({error}). ابدأ الربط من جديد.",
  unreachableText: "تعذّر الوصول إلى {provider} لإكمال الربط. حاول مرة أخرى بعد بضع دقائق.",
  notConfiguredText: "لا يمكن ربط {provider} بهذه الخدمة في الوقت الحالي.",
  confirmTitle: "ربط {provider}؟",
  confirmText: "هل تريد ربط حساب {provider} ‏{providerAccount} بحساب المواعيد الخاص بـ {name} ({email})؟",
  confirmWarning: "لا تربط إلا إذا كان حساب المواعيد هذا حسابك: ستستخدم حجوزاته حساب {provider} هذا. إذا أرسل إليك شخص آخر هذا الرابط، فاختر «عدم الربط».",
  confirmButton: "ربط",
  declineButton: "عدم الربط",
  declinedText: "لم يتم ربط {provider}، وتم سحب الإذن الذي منحته للتو.",
};

const hi: OAuthMessages = {
  connectedTitle: "जुड़ गया",
  connectedText: "आपका {provider} खाता जुड़ गया है। आप यह पेज बंद कर सकते हैं।",
  failedTitle: "नहीं जुड़ा",
  deniedText: "{provider} नहीं जुड़ा, क्योंकि पहुँच की अनुमति नहीं दी गई।",
  stateText: "जोड़ना पूरा करने का यह लिंक अज्ञात है, उसकी अवधि समाप्त हो गई है या वह पहले ही इस्तेमाल हो चुका है। फिर से जोड़ना शुरू करें।",
  codeText: "{provider} ने प्राधिकरण स्वीकार नहीं किया। फिर से जोड़ना शुरू करें।",
  providerErrorText: "{provider} ने एक त्रुटि के साथ जवाब दिया ({error})। फिर से जोड़ना शुरू करें।",
  unreachableText: "जोड़ना पूरा करने के लिए {provider} तक नहीं पहुँचा जा सका। कुछ मिनट बाद फिर कोशिश करें।",
  notConfiguredText: "अभी {provider} को इस सेवा से नहीं जोड़ा जा सकता।",
  confirmTitle: "{provider} जोड़ें?",
  confirmText: "{provider} खाता {providerAccount} को {name} ({email}) के शेड्यूलिंग खाते से जोड़ें?",
  confirmWarning: "केवल तभी जोड़ें जब वह शेड्यूलिंग खाता आपका हो: उसकी बुकिंग इस {provider} खाते का उपयोग करेंगी। अगर यह लिंक आपको किसी और ने भेजा है, तो “न जोड़ें” चुनें।",
  confirmButton: "जोड़ें",
  declineButton: "न जोड़ें",
  declinedText: "{provider} नहीं जोड़ा गया, और अभी दी गई पहुँच वापस ले ली गई।",
};

const it: OAuthMessages = {
  connectedTitle: "Collegato",
  connectedText: "Il tuo account {provider} è collegato. Puoi chiudere questa pagina.",
  failedTitle: "Non collegato",
  deniedText: "{provider} non è stato collegato perché l'accesso non è stato consentito.",
  stateText: "Questo link per completare il collegamento è sconosciuto, scaduto o già usato. Ricomincia il collegamento.",
  codeText: "{provider} non ha accettato l'autorizzazione. Ricomincia il collegamento.",
  providerErrorText: "{provider} ha risposto con un errore ({error}). Ricomincia il collegamento.",
  unreachableText: "Non è stato possibile raggiungere {provider} per completare il collegamento. Riprova tra qualche minuto.",
  notConfiguredText: "Al momento {provider} non può essere collegato a questo servizio.",
  confirmTitle: "Collegare {provider}?",
  confirmText: "Collegare l'account {provider} {providerAccount} all'account di prenotazione di {name} ({email})?",
  confirmWarning: "Collega solo se quell'account di prenotazione è tuo: le sue prenotazioni useranno questo account {provider}. Se qualcun altro ti ha inviato questo link, scegli «Non collegare».",
  confirmButton: "Collega",
  declineButton: "Non collegare",
  declinedText: "{provider} non è stato collegato e l'accesso appena concesso è stato revocato.",
};

export const oauthMessages: Readonly<Record<Locale, OAuthMessages>> = { en, fr, de, es, nl, ru, zh, ja, ar, hi, it };
