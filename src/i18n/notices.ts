// The words of the e-mail that tells a host a calendar connection or a meeting account needs them (features/notices/mail.ts), in all eleven locales.
import type { Locale } from "../domain/locales.js";

/*
 * Placeholders: {name} the host's name, {account} the connection's account as GET /calendar_connections shows it
 * (the CalDAV user name, a feed's host name, the Google or Microsoft address), {reason} the connection's
 * last_error (one line, in English: the service's reasons are not translated), {provider} a meeting account's
 * provider as people know it ("Zoom"). The *Meeting* keys are about a video-meeting account (Zoom), the others
 * about a calendar.
 * One line says what happened, the next what to do about it (integrations.md "When a calendar or meeting account
 * needs the host").
 */
const en = {
  greeting: "Hello {name},",
  subjectError: "Your calendar {account} cannot be read",
  lineError: "Your calendar {account} could not be read: {reason}",
  todoError: "Check that its server is reachable and that the address is still right. The service keeps trying; until it can read the calendar, your booking page may offer no times.",
  subjectInvalid: "Connect your calendar {account} again",
  lineInvalid: "Your calendar {account} no longer accepts the service's access: {reason}",
  todoInvalid: "Connect it again with its current password or authorization. Until then, your booking page may offer no times.",
  subjectWarnings: "Some events of your calendar {account} could not be read",
  lineWarnings: "Some events of your calendar {account} could not be read and do not block your times:",
  todoWarnings: "Correct these events in your calendar; the next read picks them up.",
  footer: "You get this message at most once a day for each calendar and kind of problem.",
  subjectMeetingError: "Your {provider} account {account} cannot make meetings",
  lineMeetingError: "Your {provider} account {account} could not make a meeting: {reason}",
  todoMeetingError: "The service keeps trying; until it succeeds, new bookings may get no meeting link. If it goes on, check {provider}'s status.",
  subjectMeetingInvalid: "Connect your {provider} account {account} again",
  lineMeetingInvalid: "Your {provider} account {account} no longer accepts the service's access: {reason}",
  todoMeetingInvalid: "Authorize {provider} again in your integrations. Until then, new bookings get no meeting link.",
  footerMeeting: "You get this message at most once a day for each meeting account and kind of problem.",
};

type NoticeMessages = typeof en;

const fr: NoticeMessages = {
  greeting: "Bonjour {name},",
  subjectError: "Votre calendrier {account} ne peut pas être lu",
  lineError: "Votre calendrier {account} n'a pas pu être lu : {reason}",
  todoError: "Vérifiez que son serveur est joignable et que l'adresse est toujours la bonne. Le service réessaie ; tant qu'il ne peut pas lire le calendrier, votre page de réservation peut n'offrir aucun créneau.",
  subjectInvalid: "Reconnectez votre calendrier {account}",
  lineInvalid: "Votre calendrier {account} n'accepte plus l'accès du service : {reason}",
  todoInvalid: "Reconnectez-le avec son mot de passe ou son autorisation actuels. D'ici là, votre page de réservation peut n'offrir aucun créneau.",
  subjectWarnings: "Certains événements de votre calendrier {account} n'ont pas pu être lus",
  lineWarnings: "Certains événements de votre calendrier {account} n'ont pas pu être lus et ne bloquent pas vos créneaux :",
  todoWarnings: "Corrigez ces événements dans votre calendrier ; la prochaine lecture en tiendra compte.",
  footer: "Vous recevez ce message au plus une fois par jour pour chaque calendrier et chaque type de problème.",
  subjectMeetingError: "Votre compte {provider} {account} ne peut pas créer de réunions",
  lineMeetingError: "Votre compte {provider} {account} n'a pas pu créer une réunion : {reason}",
  todoMeetingError: "Le service réessaie ; d'ici là, les nouvelles réservations peuvent ne pas recevoir de lien de réunion. Si cela continue, vérifiez l'état de {provider}.",
  subjectMeetingInvalid: "Reconnectez votre compte {provider} {account}",
  lineMeetingInvalid: "Votre compte {provider} {account} n'accepte plus l'accès du service : {reason}",
  todoMeetingInvalid: "Autorisez de nouveau {provider} dans vos intégrations. D'ici là, les nouvelles réservations ne reçoivent pas de lien de réunion.",
  footerMeeting: "Vous recevez ce message au plus une fois par jour pour chaque compte de réunion et chaque type de problème.",
};

const de: NoticeMessages = {
  greeting: "Hallo {name},",
  subjectError: "Ihr Kalender {account} kann nicht gelesen werden",
  lineError: "Ihr Kalender {account} konnte nicht gelesen werden: {reason}",
  todoError: "Prüfen Sie, ob sein Server erreichbar und die Adresse noch richtig ist. Der Dienst versucht es weiter; solange er den Kalender nicht lesen kann, bietet Ihre Buchungsseite womöglich keine Zeiten an.",
  subjectInvalid: "Verbinden Sie Ihren Kalender {account} erneut",
  lineInvalid: "Ihr Kalender {account} nimmt den Zugriff des Dienstes nicht mehr an: {reason}",
  todoInvalid: "Verbinden Sie ihn erneut mit dem aktuellen Passwort oder der aktuellen Freigabe. Bis dahin bietet Ihre Buchungsseite womöglich keine Zeiten an.",
  subjectWarnings: "Einige Termine Ihres Kalenders {account} konnten nicht gelesen werden",
  lineWarnings: "Einige Termine Ihres Kalenders {account} konnten nicht gelesen werden und blockieren Ihre Zeiten nicht:",
  todoWarnings: "Korrigieren Sie diese Termine in Ihrem Kalender; das nächste Lesen berücksichtigt sie.",
  footer: "Sie erhalten diese Nachricht höchstens einmal am Tag je Kalender und Art des Problems.",
  subjectMeetingError: "Ihr {provider}-Konto {account} kann keine Meetings anlegen",
  lineMeetingError: "Ihr {provider}-Konto {account} konnte kein Meeting anlegen: {reason}",
  todoMeetingError: "Der Dienst versucht es weiter; bis dahin erhalten neue Buchungen womöglich keinen Meeting-Link. Wenn es anhält, prüfen Sie den Status von {provider}.",
  subjectMeetingInvalid: "Verbinden Sie Ihr {provider}-Konto {account} erneut",
  lineMeetingInvalid: "Ihr {provider}-Konto {account} akzeptiert den Zugriff des Dienstes nicht mehr: {reason}",
  todoMeetingInvalid: "Autorisieren Sie {provider} in Ihren Integrationen erneut. Bis dahin erhalten neue Buchungen keinen Meeting-Link.",
  footerMeeting: "Sie erhalten diese Nachricht höchstens einmal am Tag je Meeting-Konto und Art des Problems.",
};

const es: NoticeMessages = {
  greeting: "Hola, {name}:",
  subjectError: "No se puede leer tu calendario {account}",
  lineError: "No se pudo leer tu calendario {account}: {reason}",
  todoError: "Comprueba que su servidor esté accesible y que la dirección siga siendo correcta. El servicio lo sigue intentando; mientras no pueda leer el calendario, tu página de reservas puede no ofrecer horarios.",
  subjectInvalid: "Vuelve a conectar tu calendario {account}",
  lineInvalid: "Tu calendario {account} ya no acepta el acceso del servicio: {reason}",
  todoInvalid: "Vuelve a conectarlo con su contraseña o autorización actual. Hasta entonces, tu página de reservas puede no ofrecer horarios.",
  subjectWarnings: "No se pudieron leer algunos eventos de tu calendario {account}",
  lineWarnings: "No se pudieron leer algunos eventos de tu calendario {account} y no bloquean tus horarios:",
  todoWarnings: "Corrige estos eventos en tu calendario; la próxima lectura los tendrá en cuenta.",
  footer: "Recibes este mensaje como máximo una vez al día por cada calendario y tipo de problema.",
  subjectMeetingError: "Tu cuenta de {provider} {account} no puede crear reuniones",
  lineMeetingError: "Tu cuenta de {provider} {account} no pudo crear una reunión: {reason}",
  todoMeetingError: "El servicio lo sigue intentando; mientras tanto, las reservas nuevas pueden quedarse sin enlace de reunión. Si continúa, revisa el estado de {provider}.",
  subjectMeetingInvalid: "Vuelve a conectar tu cuenta de {provider} {account}",
  lineMeetingInvalid: "Tu cuenta de {provider} {account} ya no acepta el acceso del servicio: {reason}",
  todoMeetingInvalid: "Vuelve a autorizar {provider} en tus integraciones. Mientras tanto, las reservas nuevas no reciben enlace de reunión.",
  footerMeeting: "Recibes este mensaje como máximo una vez al día por cada cuenta de reuniones y tipo de problema.",
};

const nl: NoticeMessages = {
  greeting: "Hallo {name},",
  subjectError: "Je agenda {account} kan niet worden gelezen",
  lineError: "Je agenda {account} kon niet worden gelezen: {reason}",
  todoError: "Controleer of de server bereikbaar is en het adres nog klopt. De dienst blijft het proberen; zolang de agenda niet gelezen kan worden, biedt je boekingspagina mogelijk geen tijden aan.",
  subjectInvalid: "Koppel je agenda {account} opnieuw",
  lineInvalid: "Je agenda {account} accepteert de toegang van de dienst niet meer: {reason}",
  todoInvalid: "Koppel hem opnieuw met het huidige wachtwoord of de huidige toestemming. Tot dan biedt je boekingspagina mogelijk geen tijden aan.",
  subjectWarnings: "Sommige afspraken in je agenda {account} konden niet worden gelezen",
  lineWarnings: "Sommige afspraken in je agenda {account} konden niet worden gelezen en blokkeren je tijden niet:",
  todoWarnings: "Corrigeer deze afspraken in je agenda; de volgende keer lezen neemt ze mee.",
  footer: "Je krijgt dit bericht hooguit één keer per dag per agenda en soort probleem.",
  subjectMeetingError: "Je {provider}-account {account} kan geen vergaderingen maken",
  lineMeetingError: "Je {provider}-account {account} kon geen vergadering maken: {reason}",
  todoMeetingError: "De dienst blijft het proberen; tot dan krijgen nieuwe boekingen mogelijk geen vergaderlink. Houdt het aan, controleer dan de status van {provider}.",
  subjectMeetingInvalid: "Verbind je {provider}-account {account} opnieuw",
  lineMeetingInvalid: "Je {provider}-account {account} accepteert de toegang van de dienst niet meer: {reason}",
  todoMeetingInvalid: "Autoriseer {provider} opnieuw bij je integraties. Tot dan krijgen nieuwe boekingen geen vergaderlink.",
  footerMeeting: "Je krijgt dit bericht hooguit één keer per dag per vergaderaccount en soort probleem.",
};

const ru: NoticeMessages = {
  greeting: "Здравствуйте, {name}!",
  subjectError: "Не удаётся прочитать ваш календарь {account}",
  lineError: "Не удалось прочитать ваш календарь {account}: {reason}",
  todoError: "Проверьте, что его сервер доступен и адрес по-прежнему верный. Сервис продолжает попытки; пока календарь не прочитан, ваша страница бронирования может не предлагать время.",
  subjectInvalid: "Подключите календарь {account} заново",
  lineInvalid: "Ваш календарь {account} больше не принимает доступ сервиса: {reason}",
  todoInvalid: "Подключите его заново с текущим паролем или разрешением. До тех пор ваша страница бронирования может не предлагать время.",
  subjectWarnings: "Некоторые события календаря {account} не удалось прочитать",
  lineWarnings: "Некоторые события вашего календаря {account} не удалось прочитать, и они не блокируют ваше время:",
  todoWarnings: "Исправьте эти события в календаре; при следующем чтении они будут учтены.",
  footer: "Это сообщение приходит не чаще раза в день для каждого календаря и вида проблемы.",
  subjectMeetingError: "Ваш аккаунт {provider} {account} не может создавать встречи",
  lineMeetingError: "Ваш аккаунт {provider} {account} не смог создать встречу: {reason}",
  todoMeetingError: "Сервис продолжает попытки; до тех пор новые бронирования могут остаться без ссылки на встречу. Если это продолжается, проверьте состояние {provider}.",
  subjectMeetingInvalid: "Подключите аккаунт {provider} {account} заново",
  lineMeetingInvalid: "Ваш аккаунт {provider} {account} больше не принимает доступ сервиса: {reason}",
  todoMeetingInvalid: "Авторизуйте {provider} заново в интеграциях. До тех пор новые бронирования не получают ссылку на встречу.",
  footerMeeting: "Это сообщение приходит не чаще раза в день для каждого аккаунта встреч и вида проблемы.",
};

const zh: NoticeMessages = {
  greeting: "{name}，您好：",
  subjectError: "无法读取您的日历 {account}",
  lineError: "无法读取您的日历 {account}：{reason}",
  todoError: "请检查其服务器是否可以访问、地址是否仍然正确。服务会继续重试；在能读取该日历之前，您的预约页面可能不提供任何时间。",
  subjectInvalid: "请重新连接您的日历 {account}",
  lineInvalid: "您的日历 {account} 不再接受本服务的访问：{reason}",
  todoInvalid: "请使用当前的密码或授权重新连接。在此之前，您的预约页面可能不提供任何时间。",
  subjectWarnings: "您的日历 {account} 中有部分日程无法读取",
  lineWarnings: "您的日历 {account} 中有部分日程无法读取，它们不会占用您的时间：",
  todoWarnings: "请在日历中修正这些日程；下次读取时会生效。",
  footer: "每个日历的每种问题每天最多发送一次此消息。",
  subjectMeetingError: "您的 {provider} 账户 {account} 无法创建会议",
  lineMeetingError: "您的 {provider} 账户 {account} 未能创建会议：{reason}",
  todoMeetingError: "服务会继续重试；在此之前，新的预约可能没有会议链接。如果问题持续，请检查 {provider} 的服务状态。",
  subjectMeetingInvalid: "请重新连接您的 {provider} 账户 {account}",
  lineMeetingInvalid: "您的 {provider} 账户 {account} 不再接受本服务的访问：{reason}",
  todoMeetingInvalid: "请在集成中重新授权 {provider}。在此之前，新的预约不会有会议链接。",
  footerMeeting: "每个会议账户的每种问题每天最多发送一次此消息。",
};

const ja: NoticeMessages = {
  greeting: "{name} 様",
  subjectError: "カレンダー {account} を読み取れません",
  lineError: "カレンダー {account} を読み取れませんでした：{reason}",
  todoError: "サーバーに接続できること、アドレスが正しいことを確認してください。サービスは再試行を続けます。カレンダーを読み取れるまで、予約ページに時間が表示されないことがあります。",
  subjectInvalid: "カレンダー {account} を再接続してください",
  lineInvalid: "カレンダー {account} がサービスのアクセスを受け付けなくなりました：{reason}",
  todoInvalid: "現在のパスワードまたは認可で再接続してください。それまで、予約ページに時間が表示されないことがあります。",
  subjectWarnings: "カレンダー {account} の一部の予定を読み取れませんでした",
  lineWarnings: "カレンダー {account} の一部の予定を読み取れず、これらはあなたの時間をふさぎません：",
  todoWarnings: "カレンダーでこれらの予定を修正してください。次回の読み取りで反映されます。",
  footer: "このメッセージは、カレンダーと問題の種類ごとに 1 日 1 回まで送信されます。",
  subjectMeetingError: "{provider} アカウント {account} で会議を作成できません",
  lineMeetingError: "{provider} アカウント {account} で会議を作成できませんでした: {reason}",
  todoMeetingError: "サービスは再試行を続けます。それまでの間、新しい予約には会議リンクが付かない場合があります。続く場合は {provider} の稼働状況を確認してください。",
  subjectMeetingInvalid: "{provider} アカウント {account} を再接続してください",
  lineMeetingInvalid: "{provider} アカウント {account} はサービスのアクセスを受け付けなくなりました: {reason}",
  todoMeetingInvalid: "連携設定で {provider} を再度承認してください。それまでの間、新しい予約には会議リンクが付きません。",
  footerMeeting: "このメッセージは、会議アカウントと問題の種類ごとに 1 日 1 回まで送信されます。",
};

const ar: NoticeMessages = {
  greeting: "مرحبًا {name}،",
  subjectError: "تعذّرت قراءة تقويمك {account}",
  lineError: "تعذّرت قراءة تقويمك {account}: {reason}",
  todoError: "تحقّق من إمكانية الوصول إلى خادمه ومن أن العنوان ما زال صحيحًا. تواصل الخدمة المحاولة؛ وإلى أن تتمكن من قراءة التقويم قد لا تعرض صفحة الحجز أي أوقات.",
  subjectInvalid: "أعد ربط تقويمك {account}",
  lineInvalid: "لم يعد تقويمك {account} يقبل وصول الخدمة: {reason}",
  todoInvalid: "أعد ربطه بكلمة المرور أو التفويض الحاليين. وحتى ذلك الحين قد لا تعرض صفحة الحجز أي أوقات.",
  subjectWarnings: "تعذّرت قراءة بعض أحداث تقويمك {account}",
  lineWarnings: "تعذّرت قراءة بعض أحداث تقويمك {account} وهي لا تحجز أوقاتك:",
  todoWarnings: "صحّح هذه الأحداث في تقويمك؛ وستُؤخذ في الحسبان في القراءة التالية.",
  footer: "تصلك هذه الرسالة مرة واحدة في اليوم على الأكثر لكل تقويم ولكل نوع من المشكلات.",
  subjectMeetingError: "لا يمكن لحسابك في {provider} {account} إنشاء اجتماعات",
  lineMeetingError: "تعذّر على حسابك في {provider} {account} إنشاء اجتماع: {reason}",
  todoMeetingError: "تواصل الخدمة المحاولة؛ وحتى ذلك الحين قد لا تحصل الحجوزات الجديدة على رابط اجتماع. إذا استمر ذلك، فتحقّق من حالة {provider}.",
  subjectMeetingInvalid: "أعد ربط حسابك في {provider} {account}",
  lineMeetingInvalid: "لم يعد حسابك في {provider} {account} يقبل وصول الخدمة: {reason}",
  todoMeetingInvalid: "امنح {provider} الإذن من جديد في عمليات الدمج. وحتى ذلك الحين لن تحصل الحجوزات الجديدة على رابط اجتماع.",
  footerMeeting: "تصلك هذه الرسالة مرة واحدة في اليوم على الأكثر لكل حساب اجتماعات ولكل نوع من المشكلات.",
};

const hi: NoticeMessages = {
  greeting: "नमस्ते {name},",
  subjectError: "आपका कैलेंडर {account} पढ़ा नहीं जा सकता",
  lineError: "आपका कैलेंडर {account} पढ़ा नहीं जा सका: {reason}",
  todoError: "जाँचें कि उसका सर्वर पहुँच में है और पता अब भी सही है। सेवा कोशिश करती रहती है; जब तक कैलेंडर पढ़ा नहीं जाता, आपका बुकिंग पेज शायद कोई समय न दिखाए।",
  subjectInvalid: "अपना कैलेंडर {account} फिर से जोड़ें",
  lineInvalid: "आपका कैलेंडर {account} अब सेवा की पहुँच स्वीकार नहीं करता: {reason}",
  todoInvalid: "इसे मौजूदा पासवर्ड या अनुमति के साथ फिर से जोड़ें। तब तक आपका बुकिंग पेज शायद कोई समय न दिखाए।",
  subjectWarnings: "आपके कैलेंडर {account} के कुछ इवेंट पढ़े नहीं जा सके",
  lineWarnings: "आपके कैलेंडर {account} के कुछ इवेंट पढ़े नहीं जा सके और वे आपके समय को नहीं रोकते:",
  todoWarnings: "इन इवेंट को अपने कैलेंडर में ठीक करें; अगली बार पढ़ने पर वे शामिल होंगे।",
  footer: "यह संदेश हर कैलेंडर और हर तरह की समस्या के लिए दिन में अधिकतम एक बार आता है।",
  subjectMeetingError: "आपका {provider} खाता {account} मीटिंग नहीं बना पा रहा है",
  lineMeetingError: "आपका {provider} खाता {account} मीटिंग नहीं बना सका: {reason}",
  todoMeetingError: "सेवा कोशिश करती रहेगी; तब तक नई बुकिंग को मीटिंग लिंक शायद न मिले। अगर यह जारी रहे, तो {provider} की स्थिति जाँचें।",
  subjectMeetingInvalid: "अपना {provider} खाता {account} फिर से जोड़ें",
  lineMeetingInvalid: "आपका {provider} खाता {account} अब सेवा की पहुँच स्वीकार नहीं करता: {reason}",
  todoMeetingInvalid: "अपने इंटीग्रेशन में {provider} को फिर से अधिकृत करें। तब तक नई बुकिंग को मीटिंग लिंक नहीं मिलेगा।",
  footerMeeting: "यह संदेश हर मीटिंग खाते और हर तरह की समस्या के लिए दिन में अधिकतम एक बार आता है।",
};

const it: NoticeMessages = {
  greeting: "Ciao {name},",
  subjectError: "Non è possibile leggere il tuo calendario {account}",
  lineError: "Non è stato possibile leggere il tuo calendario {account}: {reason}",
  todoError: "Controlla che il suo server sia raggiungibile e che l'indirizzo sia ancora corretto. Il servizio continua a riprovare; finché non riesce a leggere il calendario, la tua pagina di prenotazione potrebbe non offrire orari.",
  subjectInvalid: "Ricollega il tuo calendario {account}",
  lineInvalid: "Il tuo calendario {account} non accetta più l'accesso del servizio: {reason}",
  todoInvalid: "Ricollegalo con la password o l'autorizzazione attuale. Fino ad allora, la tua pagina di prenotazione potrebbe non offrire orari.",
  subjectWarnings: "Non è stato possibile leggere alcuni eventi del tuo calendario {account}",
  lineWarnings: "Non è stato possibile leggere alcuni eventi del tuo calendario {account}, che quindi non bloccano i tuoi orari:",
  todoWarnings: "Correggi questi eventi nel tuo calendario; la prossima lettura ne terrà conto.",
  footer: "Ricevi questo messaggio al massimo una volta al giorno per ogni calendario e tipo di problema.",
  subjectMeetingError: "Il tuo account {provider} {account} non riesce a creare riunioni",
  lineMeetingError: "Il tuo account {provider} {account} non è riuscito a creare una riunione: {reason}",
  todoMeetingError: "Il servizio continua a riprovare; nel frattempo le nuove prenotazioni potrebbero non avere un link alla riunione. Se continua, controlla lo stato di {provider}.",
  subjectMeetingInvalid: "Ricollega il tuo account {provider} {account}",
  lineMeetingInvalid: "Il tuo account {provider} {account} non accetta più l'accesso del servizio: {reason}",
  todoMeetingInvalid: "Autorizza di nuovo {provider} nelle tue integrazioni. Nel frattempo le nuove prenotazioni non ricevono un link alla riunione.",
  footerMeeting: "Ricevi questo messaggio al massimo una volta al giorno per ogni account di riunioni e tipo di problema.",
};

export type NoticeKey = keyof NoticeMessages;

export const noticeMessages: Readonly<Record<Locale, NoticeMessages>> = { en, fr, de, es, nl, ru, zh, ja, ar, hi, it };
