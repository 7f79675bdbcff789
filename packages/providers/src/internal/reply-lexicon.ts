/**
 * The second reading: what a reply is about, in words near each other, for wording no row of the
 * table names. The rows of `reply-rules.ts` were each learned from replies; every fresh set of
 * replies brought new phrasings of the same things ("mailbox ( x ) not found or inactivated",
 * "Folder full", "sending too fast"), so a phrase list alone misses a third of replies it has not
 * met. A reading here pairs a subject (the address, the mailbox, the message) with what is said
 * of it (unknown, full, too large), a few words apart in either order, in the languages the corpus
 * meets. The rows reading them come after every phrase row of the table (before the bare
 * policy wording and the status class), so a phrase the table knows still decides first.
 */

/** `a` and `b` (regex sources) within `gap` words of each other, in either order; any script. */
function near(a: string, b: string, gap = 4): string {
  const word = '[\\p{L}\\d_-]';
  const gapOf = `${word}*(?:[^\\p{L}\\d_\\n]+${word}+){0,${gap}}?[^\\p{L}\\d_\\n]+`;
  const start = '(?<![\\p{L}\\d_])';
  // Tried from the start only when `b` is somewhere in the text: one pass for the rarer words,
  // instead of both lists tried at every position of every reply.
  return `(?:^(?=[\\s\\S]*?(?:${b}))[\\s\\S]*?(?:${start}(?:${a})${gapOf}(?:${b})|${start}(?:${b})${gapOf}(?:${a})))`;
}

function anyOf(...sources: string[]): RegExp {
  return new RegExp(sources.join('|'), 'iu');
}

/**
 * Two causes of different families offered as possible ("unknown or mailbox full"): the reply
 * does not decide (order 8). "Unknown or deactivated" is one family, and decides.
 */
const EITHER =
  /\b(?:or|o|ou|oder)\b (?:the )?(?:recipient'?s? )?(?:mail ?box|inbox|casilla|bo[iî]te)\b.{0,12}\b(?:full|lleno|llena|pleine?|voll|piena|over ?quota|exceed)/i;

// ---- the address does not exist ----------------------------------------------------------
const ADDRESS =
  'user(?:name)?s?|mail ?box(?:es)?|mailbox|account|recipient|rcpt|address(?:ee)?|e-?mail|destinat\\w*|local[- ]?part|alias|benutzer|empf[aä]nger|postfach|adresse|destinataire|utilisateur|bo[iî]te|destinatario|usuario|buz[oó]n|casella|casilla|utente|gebruiker|ontvanger|odbiorc\\w*|adres\\w*|u[zż]ytkownik\\w*|kont[aoy]?|indirizzo|mottagar\\w*|e-?postadress\\w*|usu[aá]rio|destinat[aá]rio|nom du destinataire|пользовател\\w*|адрес\\w*|ящик\\w*|получател\\w*|адресат\\w*|учетн\\w+ запис\\w*|аккаунт\\w*|користувач\\w*|скриньк\\w*|отримувач\\w*|u[zž]ivatel\\w*|schr[aá]nk\\w*|p[rř][ií]jemc\\w*|kullan[ıi]c[ıi]\\w*|alıcı\\w*|posta kutusu|modtager\\w*|mottaker\\w*|bruger\\w*|bruker\\w*|postkass\\w*|anv[aä]ndar\\w*|brevl[aå]d\\w*|k[aä]ytt[aä]j[aä]\\w*|vastaanottaja\\w*|osoite\\w*|c[ií]mzett\\w*|felhaszn[aá]l[oó]\\w*|postafi[oó]k\\w*|utilizator\\w*|destinatar\\w*|cuenta|direcci[oó]n|correo|conta(?!\\p{L})|endere[cç]o|caixa postal|postbus|χρήστη\\w*|παραλήπτη\\w*|pengguna|penerima|alamat|người dùng|địa chỉ';
const DOES_NOT_EXIST =
  "unknown|not (?:be )?(?:found|known|exist\\w*|valid|recogni[sz]ed|registered|present)|(?:does|do|did)(?:n't| not) exist|non-?existent|nonexist\\w*|no longer (?:exists?|valid|active|in use|available)|invalid|unrecogni[sz]ed|unregistered|deactivated|inactivated|inactive|deleted|removed|terminated|closed|unbekannt|existiert nicht|nicht (?:vorhanden|gefunden)|inconnue?|n'existe pas|inexistante?|introuvable|no existe|desconocido|inexistente|sconosciut[oa]|errat[oa]|sbagliat[oa]|inesistente|non esiste|bestaat niet|onbekend|nie istnieje|nieznan\\w*|nie ma takiego|zablokowan\\w*|nieaktywn\\w*|inativ[oa]|inactiv[oa]|disattivat[oa]|desactiv\\w*|d[ée]sactiv[ée]e?|deaktiviert|expirad[oa]|ha expirado|bloccato per inutilizzo|non recens[ée]e?|n'est pas reconnu|pas reconnue?|non (?:sono )?riuscit[oa] a trovare|non trovat[oa]|hittades inte|inte (?:att )?hitta\\w*|no se (?:pudo )?encontr\\w*|não (?:foi )?encontrad[oa]|não existe|desconhecid[oa]|niet gevonden|nie znaleziono|не существует|неизвестн\\w*|не найден\\w*|не удалось найти|не зарегистрирован\\w*|заблокирован\\w*|недействительн\\w*|отключен\\w*|удал[её]н\\w*|не існує|невідом\\w*|не знайдено|neexistuje|nezn[aá]m\\w*|nenalezen\\w*|neplatn\\w*|bulunamad[ıi]|mevcut de[gğ]il|ge[cç]ersiz|findes ikke|finnes ikke|eksisterer ikke|ukendt|ukjent|ugyldig|finns inte|ok[aä]nd|ogiltig|tuntematon|ei ole olemassa|ei l[oö]ydy|virheellinen|nem l[eé]tezik|ismeretlen|[eé]rv[eé]nytelen|nu exist[aă]|necunoscut\\w*|ongeldig|niet bekend|ung[uü]ltig|nicht bekannt|gibt es nicht|invalide|non valide|n'existe plus|inv[aá]lid[oa]|no v[aá]lid[oa]|desconocid[oa]|non valid[oa]|nieprawid[lł]ow\\w*|δεν υπάρχει|άγνωστ\\w*|tidak (?:ditemukan|dikenal|ada|valid)|không (?:tồn tại|tìm thấy)";
/** Scripts without spaces between words: the whole phrase. */
const GONE_PHRASES =
  '(?:该|此)?(?:用户|用戶|收件人|收件者|收信人|帐户|账户|帳號|帐号|邮箱|信箱|郵箱)(?:名)?(?:(?:并|並)?不存在|未开通|未開通|已被?(?:注销|註銷|停用|冻结|凍結))|(?:ユーザ|宛先|アドレス|メールアドレス|受信者|受取人|送信先|アカウント)\\S{0,8}(?:存在しません|存在していない|存在しない|見つかりません|ありません|不明|無効)|ディレクトリのリストにありません|(?:사용자|수신자|계정)\\S{0,6}(?:없습니다|존재하지)|존재하지 않는\\s*(?:사용자|계정|메일|주소|수신자)|(?:地址|邮件地址|郵件地址|账号|帳號|帐号|收信人|收件者|使用者)(?:不存在|無效|无效)|查无此(?:用户|人)|无此用户|無此用戶|宛先不明|存在しない(?:ユーザ|アドレス|宛先)';
/** What is said of someone other than the recipient: the sender, our client, its domain. */
const NOT_THE_RECIPIENT =
  /\bsender|\bfrom\b|mail from|return[- ]path|envelope from|\bhelo\b|\behlo\b|client|your (?:ip|host|server|address|domain|account)|reverse|\bptr\b|rdns|certificate|api ?key|password|credential|login|authenticat|(?<![@.-])\bdomain\b(?![.-])|(?<![@.-])\bhost\b(?![.-])|\bdns\b|\bmx\b/i;
export const RECIPIENT_GONE = anyOf(near(ADDRESS, DOES_NOT_EXIST, 5), GONE_PHRASES);

// ---- the recipient's domain does not exist ------------------------------------------------
/** The word, not a part of a host name (`test-domain.se`). */
const DOMAIN = '(?<![.@-])(?:domain|domaine|dominio|domein|domena|dom[eé]na)(?![.-])|домен\\w*|域名|ドメイン|도메인';
/** Scripts without spaces between words: the whole phrase. */
const DOMAIN_PHRASES =
  '(?:域名|网域|網域)(?:不存在|无效|無效|未找到)|ドメイン\\S{0,6}(?:存在しません|見つかりません)|도메인\\S{0,6}(?:존재하지|없습니다)';
export const DOMAIN_GONE = anyOf(near(DOMAIN, DOES_NOT_EXIST, 3), DOMAIN_PHRASES);
/** Our sender's or client's domain checked by the receiver is policy (decision order 4), not the recipient's domain. */
export const NOT_DOMAIN_GONE =
  /sender|\bfrom\b|mail from|return[- ]path|\bhelo\b|\behlo\b|client|your|reverse|\bptr\b|rdns|\bspf\b|dkim|dmarc|policy|denied|blocked|temporar|try again|later|not (?:a )?local|relay|\bdane\b|tlsa|mta-sts|\btls\b|certificate|dnssec|(?:user|recipient|mailbox|account)\b.{0,30}\b(?:unknown|not found|does not exist)/i;

// ---- the mailbox is full ------------------------------------------------------------------
const MAILBOX =
  'mail ?box(?:es)?|mailbox|inbox|in-box|account(?:\\(s\\))?|postbox|mail ?folder|folder|storage|disk|space|quota|postfach|speicher\\w*|bo[iî]te|casilla|buz[oó]n|casella|brievenbus|skrzynk\\w*|ящик\\w*|скриньк\\w*|schr[aá]nk\\w*|posta kutusu|postkass\\w*|brevl[aå]d\\w*|postilaatikko\\w*|postafi[oó]k\\w*|c[aă]su[tț]a|kotak|caixa|speicherplatz|квот\\w*';
const FULL =
  'full|exceed\\w*|overflow\\w*|over (?:its |the |their )?(?:allowed |permitted )?(?:limit|quota|capacity|size)|insufficient|no (?:more )?(?:space|room)|not (?:have )?enough (?:space|room)|(?:limit|capacity|maximum) (?:reached|exceeded)|voll|[üu]berschritten|pleine?|satur[ée]e?|lleno|llena|piena|pieno|vol\\b|pełn\\w*|zapełnion\\w*|przepełnion\\w*|esaurit[oa]|cheia|cheio|fylld|переполнен\\w*|превышен\\w*|не хватает места|space not enough|(?:space|quota) (?:is )?(?:not enough|used up)|pln[aá]|p[rř]epln[eě]n\\w*|dolu|fuld|t[aä]ynn[aä]|megtelt|plin[aă]|penuh|d[eé]pass[eé]e?|atteinte?|superat[oa]|переповнен\\w*';
/** Scripts without spaces between words: the whole phrase. */
const FULL_PHRASES =
  '(?:空间|空間|容量|邮箱|信箱)(?:已满|已滿|不足)|(?:メールボックス|容量)\\S{0,6}(?:一杯|満杯|いっぱい|超過|オーバー)|(?:용량|메일함)\\S{0,6}(?:초과|부족)|(?:超出|超过)(?:容量|配额|空间)|配额已满|容量超出';
/** "Quota" that is a sending limit, not a mailbox's (the phrase rows' exclusion too). */
export const SENDING_QUOTA =
  /policy rejection\W+quota exceeded|quota for (?:the )?(?:total )?(?:number of )?(?:\w+ )?(?:recipients|messages|e-?mails|sending)|queue quota|quota for sending|submission quota|send(?:ing)? quota|relay quota|with the same Message-ID|daily quota|hourly quota|throttling quota/i;
/** Besides a sending limit: a rate, a message too large for the server, two causes offered. */
export const NOT_A_FULL_MAILBOX = new RegExp(
  `${EITHER.source}|${SENDING_QUOTA.source}|\\bsend(?:ing)?\\b|\\brelay|submission|outgoing|outbound|per (?:second|minute|hour|day)|\\brate\\b|daily|monthly|message (?:size|too)|size of (?:the |this |your )?message|message (?:is )?larger|attachment|system storage|insufficient disk space|write error|transfer|queue quota|your account|recipients\\b.{0,20}\\b(?:limit|exceed)|recipient (?:limit|count)`,
  'i',
);
export const MAILBOX_OVER = anyOf(near(MAILBOX, FULL, 4), FULL_PHRASES);

// ---- sending too much, too fast -------------------------------------------------------------
const TOO =
  'too (?:many|much|fast|quickly|often|frequent\\w*|rapid\\w*)|excessive|exceed\\w* (?:the |our |your |a |its )?(?:\\w+ )?(?:rate|threshold|frequency)|rate[- ]?limit\\w*|frequency|zu viele|trop de|demasiad[oa]s|troppi|troppe|te veel|za dużo|слишком много|zu schnell|trop rapide\\w*|demasiado r[aá]pido|troppo veloc\\w*|te snel|zbyt (?:wiele|du[zż]o|szybko|cz[eę]sto)|слишком (?:част\\w*|быстро)|muit[oa]s';
const TRAFFIC =
  'mails?|e-?mails?|messages?|msgs?|recipients?|rcpts?|connections?|sessions?|requests?|deliver\\w*|sending|sends?|submissions?|transactions?|traffic|nachrichten|verbindungen|conexiones|mensajes|messaggi|connessioni|berichten|wiadomości|сообщени\\w*|писем';
/** "Too many" of things that are a sender's fault, not its volume. */
const NOT_VOLUME =
  /invalid|rejected|unknown|bad (?:recipients?|commands?)|(?<!")errors?\b(?!")|hops|failed|failures|bounce|complaint|spam|reputation|\bspf\b|dkim|dmarc|authenticat|untrusted|new or|\btls\b|\bssl\b|size|length|load|received headers|loop|lines|header|daily|per day|today|24 ?h|monthly|per month|this month/i;
/** Scripts without spaces between words: the whole phrase. */
const TOO_MUCH_PHRASES =
  '(?:发送|發送|发信|發信|投递|连接|連接|请求|請求)(?:频率|頻率|次数|次數)?(?:过高|過高|过快|過快|过于频繁|過於頻繁|过多|過多|超限|超出限制)|(?:频率|頻率)(?:过高|過高|过快|過快|超限)|送信(?:数|回数|頻度)\\S{0,4}(?:多すぎ|超過|制限)|너무 많은 (?:메일|연결|요청)';
export const TOO_MUCH_TRAFFIC = anyOf(near(TOO, TRAFFIC, 4), TOO_MUCH_PHRASES);
/** A count of messages, recipients or connections at its limit (a window of a day or more is a quota, read before). */
export const TRAFFIC_LIMIT = anyOf(
  near(
    TRAFFIC,
    'limit(?:s|ed)?|max(?:imum)?|exceed\\w*|reached|cap\\b|limite|l[ií]mite|grenze|limiet|limit\\w*|лимит\\w*|上限|限制',
    3,
  ),
);
/** Besides the volume exclusions: a time or attempts limit is the queue's own expiry, a limit with a block a verdict. */
export const NOT_TRAFFIC_LIMIT = new RegExp(
  `${NOT_VOLUME.source}|\\btime\\b|attempts?\\b|retries|block|mail ?box|quota|depth|archives?`,
  'i',
);

// ---- a daily, monthly or plan limit -------------------------------------------------------
const WINDOW =
  'your account|daily|per day|a day|each day|today|24[- ]?h(?:ours?|rs?)?|monthly|per month|this month|billing period|plan|subscription|tageslimit|journali[eè]re?|diario|giornalier[oa]';
const LIMIT = 'limit\\w*|quota\\w*|allowance|maximum|cap|allotment|credits?|kontingent';
export const WINDOW_LIMIT = anyOf(near(WINDOW, LIMIT, 5));

// ---- the message itself: size, format, attachments ----------------------------------------------
const MESSAGE_PART =
  'message|mail|e-?mail|attachments?|files?|data|body|lines?|headers?|mime|part|nachricht|anhang|pi[eè]ce jointe|adjunto|allegato|bijlage|załącznik\\w*|вложени\\w*|письм\\w*';
const TOO_BIG =
  'too (?:large|big|long)|oversi[sz]ed?|exceed\\w* (?:the )?(?:\\w+ )?(?:size|length)|size (?:limit|exceeded|too)|larger than|zu gro(?:ß|ss)|trop (?:volumineux|gros|grand)|demasiado grande|troppo grande|te groot|za duż\\w*|слишком больш\\w*';
const MALFORMED =
  'malformed|mal-formed|corrupt\\w*|badly formatted|improperly formatted|not (?:rfc|standards?)[- ]?complian\\w*|non-?compliant|syntax error|invalid (?:format|syntax|encoding|mime|headers?|characters?)|unparse?able|cannot be parsed|could not be parsed';
const FORBIDDEN_FILE =
  '(?:attachments?|anh[aä]nge?n?|file (?:types?|extensions?|names?)|executables?|(?:multi-?part )?mime (?:parts?|messages?))';
const NOT_ALLOWED =
  'not (?:allowed|permitted|accepted)|nicht erlaubt|nicht zul[aä]ssig|non consentit[oi]|no permitid[oa]s?|forbidden|prohibited|blocked|banned|dangerous|unsafe|rejected|refused|disallowed';
export const MESSAGE_UNFIT = anyOf(
  near(MESSAGE_PART, TOO_BIG, 4),
  near(MESSAGE_PART, MALFORMED, 4),
  near(FORBIDDEN_FILE, NOT_ALLOWED, 4),
  'virus|malware|trojan|infected|ransomware|viren|virenbefund',
  '(?:邮件|郵件|信件|メール|메일)\\S{0,4}(?:过大|過大|太大|超大|サイズ超過|が大きすぎ)',
);
/** A spam or phishing verdict, or a refusal of us, names the message too: it is policy (decision order 5). */
const NOT_CONTENT =
  /smtp (?:reply|response)|bulk message|spam|phish|junk|\bUBE\b|suspicious|reputation|blocked (?:by|using|you)|policy|relaying denied/i;

// ---- a spam verdict, in the corpus's languages ------------------------------------------------
/** Decision order 5: spam or unwanted mail is policy (a 4xx one a deferral, by the table's 4xx invariant). */
export const SPAM_VERDICT_WORDS =
  /\bspam\b|unerw[uü]nscht|ind[eé]sirable|non sollicit[eé]|no deseado|correo basura|indesejad[oa]|indesiderat[oa]|posta indesiderata|ongewenst|niechcian\w*|nevy[zž][aá]dan\w*|нежелательн\w*|спам|垃圾邮件|垃圾郵件|迷惑メール|스팸/i;

// ---- the message's headers and form ----------------------------------------------------------
const HEADER_PART =
  "(?:from|to|date|subject|return-path|message-id|reply-to|sender|cc|mime)?\\s?'?\\s?headers?|subject|mime[- ]?type|html (?:mail|e-?mail|messages?)";
const HEADER_SAID =
  'missing|too old|in the future|far in the (?:past|future)|no valid|not valid|invalid|malformed|unrecogni[sz]ed|syntax|must not|wrongly formatted|badly formatted|too many lines|not accepted|empty|duplicated?';
export const MESSAGE_HEADER_UNFIT = anyOf(near(HEADER_PART, HEADER_SAID, 3), '\\bno headers\\b');
/** An authentication header checked, or a sender's domain named in the From header, is the sender's check (policy). */
export const NOT_HEADER_UNFIT = /\b(?:dkim|spf|dmarc|arc)\b|authenticat|spam|phish|domain|not allowed in/i;

// ---- an API request missing what a message needs ---------------------------------------------
const REQUEST_PART =
  'fields?|parameters?|json|subject|body|text or html|to\\b|from\\b|attachments?|templates?|metadata|variables?|dataVariables|input|payload|message length|mime ?types?|keys?|type|data|recipient field';
const REQUEST_SAID =
  'required|missing|mandatory|malformed|must specify|is more than|limited to|must be|invalid|error|mismatch|between|found';
/** An API refusing the message we built (a field missing, a body malformed): content, not our account. */
export const REQUEST_UNFIT = anyOf(near(REQUEST_PART, REQUEST_SAID, 4));

// ---- the receiver's scanner, not the message --------------------------------------------------
/** A virus or spam scanner that failed: the receiver's trouble (transient), never a verdict on the message. */
export const SCANNER_TROUBLE = anyOf(
  near(
    '(?:anti-?)?virus(?:[- ]?scanner)?|scanner|scan\\b|oletools|clamd?|spamd|spamassassin|milter',
    'problem|error|not ready|unavailable|failed|failure|timeout|timed out|running|down\\b|not responding|unable',
    3,
  ),
);
export const NOT_SCANNER_TROUBLE =
  /found|detected|infected|contains?|identified|\bis a virus|virus:|not have been delivered/i;

// ---- the receiver's own trouble ---------------------------------------------------------------
const SERVER =
  'server|system|service(?! provider)|host|backend|database|storage|disk|queue|process\\w*|mta|smtp|serveur|servidor|syst[eè]me|sistema|systeem|система|сервер\\w*|服务器|伺服器|系统|系統|サーバ\\w*|システム|서버|시스템';
const TROUBLE =
  'error|failure|fault|problem|trouble|unavailable|not available|overloaded|maintenance|down\\b|busy|exception|crash\\w*|unreachable|timeout|timed out|not responding|fehler|st[oö]rung|erreur|panne|errore|erro|b[lł][aą]d\\w*|ошибк\\w*|сбо[йи]\\w*|错误|錯誤|故障|繁忙|エラー|障害|오류|장애';
/** Scripts without spaces between words: the whole phrase. */
const TROUBLE_PHRASES =
  '(?:服务器|伺服器|系统|系統|サーバー?|システム)\\S{0,6}(?:错误|錯誤|出错|出錯|故障|繁忙|忙碌|异常|異常|维护|維護|エラー|障害|メンテナンス|ビジー)';
export const RECEIVER_TROUBLE = anyOf(near(SERVER, TROUBLE, 3), TROUBLE_PHRASES);
/** Trouble that is someone's verdict or check, not the receiver's system. */
const NOT_SYSTEM =
  /spam|unwanted|unsolicited|abuse|policy|blocked|denied|reject|reputation|\bspf\b|dkim|dmarc|authenticat|user unknown|no such|not found|does not exist|invalid|syntax|certificate|tls|ssl|report this error|whitelist|port check\b|blackhol/i;

// ---- our own login and identity at the relay (sender_config is only ours) -------------------
const LOGIN =
  'smtp[- ]?auth\\w*|auth(?:entication|entification|enticate|enticated|entifizierung)?\\b|anmeldung|log ?in|log ?on|credentials?|password|passwort|mot de passe|contrase[nñ]a|senha|api[- ]?key|submission';
const LOGIN_SAID =
  'required|requires|must|needs?\\b|needed|failed|failure|invalid|incorrect|wrong|unknown|unsupported|not (?:allowed|permitted|enabled|supported|accepted|valid)|expired|erforderlich|requise?|obligatori[oa]|fehlgeschlagen|[eé]chou[eé]e?';
/** The sender address measured against the login that submits it. */
const FROM_ADDRESS = '(?:envelope |mail )?(?:from|sender)(?: address| domain)?';
const LOGGED_IN =
  'authenticat\\w* (?:user|account|login|sender|identity)|logged[- ]in (?:user|account)|log(?:in|on) (?:user|name|account)|auth(?:ori[sz]ation|ori[sz]ed)? user|smtp user|authorized identity';
export const OUR_LOGIN = anyOf(near(LOGIN, LOGIN_SAID, 4));
export const OUR_IDENTITY = anyOf(near(FROM_ADDRESS, LOGGED_IN, 7));
/** Our account, key or submission at the relay, refused ("your" is never the recipient). */
const OUR_SIDE = 'your account|your api ?key|outgoing mail|(?:message )?submission(?: port)?';
const REFUSED_TO_US =
  'not authori[sz]ed|suspended|disabled|not associated|not verified|unauthenticated|authori[sz]ed users only|locked';
export const OUR_ACCOUNT = anyOf(near(OUR_SIDE, REFUSED_TO_US, 5));
/** A receiver's check of our authentication (SPF, DKIM, DMARC) is policy, not our login; a temporary failure is not a setting. */
export const NOT_OUR_LOGIN =
  /\b(?:spf|dkim|dmarc|arc)\b|sender is unauthenticated|unauthenticated (?:e-?mail|mail|message)|authentication (?:information|checks?|level|results?)|temporar|try again|recipient|mailbox|rcpt|spam|reputation|RESOLVER\.RST|relay|size|exceed|anti-spoofing/i;

/** The recipient reading's exclusions: someone else named, a protocol parameter, a verdict, a deferral, two causes. */
const NOT_RECIPIENT_GONE = new RegExp(
  `${NOT_THE_RECIPIENT.source}|parameters? not recognized|not implemented|policy|denied|blocked|refused|temporar|try again|later|${EITHER.source}`,
  'i',
);

export { NOT_RECIPIENT_GONE, NOT_VOLUME, NOT_CONTENT, NOT_SYSTEM };

// ---- the reply says it is not final (decision order 6: text over code) -------------------------
/** "Try again later", "temporarily", in the languages the corpus meets. */
export const TRY_LATER =
  /\btempfail\b|try again later|try again in|please try later|retry later|essayer plus tard|come back later|temporar(?:y|ily)\b|retry soon|try again \[|please try again\.?$|\bsoft bounce\b|vor[uü]bergehend|tempor[aä]r\b|temporairement|temporalmente|temporaneamente|temporariamente|tijdelijk|tymczasow\w*|do[cč]asn\w*|временн\w*|ge[cç]ici|midlertidig|tillf[aä]llig\w*|väliaikai\w*|átmeneti|暂时|暫時|一時的|일시적|später (?:erneut|noch ?mal|wieder)|plus tard|m[aá]s tarde|pi[uù] tardi|later (?:opnieuw|nog eens)|później|позже|稍后|稍後|しばらくして|後ほど|나중에/i;
/**
 * A permanent reading of a reply that says it is for now is read as its temporary counterpart, as
 * under a 4xx (`classify.ts`): "temporary failure because … spam source", "deferred using … Email
 * Reputation", "try after some time". Measured on the first reads of sets 1–13: 9 of their 40
 * severe misreads said so.
 */
export const SAYS_NOT_FINAL = new RegExp(
  `${TRY_LATER.source}|try after some time|please try again|\\bpostponed\\b|\\bdefer \\(-?\\d+\\)|, transient$|will (?:continue to try|keep trying|retry|try again)|\\bdeferred\\b|\\bnot (?:yet )?ready\\b`,
  'i',
);
/** Unless it also says it is final. */
export const SAYS_FINAL =
  /\bnot (?:a )?temporar|\bpermanent(?:ly)?\b|will not succeed|(?:do not|don't) (?:retry|try again|resend)|no (?:further )?retr(?:y|ies)|retrying will not/i;

// ---- a count limit over a window, whatever row matched (decision order 1–3) --------------------
/**
 * What is not a sending limit though it says "limit" or "quota": a mailbox's storage, a message's
 * size, a verdict on the sender. (A sending quota says so, and is one whatever else it says.)
 */
export const NOT_A_SENDING_LIMIT =
  /mail ?box|storage|disk|\bspace\b|\bsize\b|inbox|folder|postfach|over ?quota|too (?:big|large)|\d+ ?[KMG]B\b|bytes|spam|complain|reputation|virus|blocked for the day/i;
/** A limit of a day or longer, a plan's or an account's: `quota_exhausted`; any other is `throttled`. */
export const A_DAY_OR_LONGER = new RegExp(`\\b(?:${WINDOW})\\b|billing|credits?`, 'i');

// ---- a bad address said together with a verdict on the sender (decision order 4, 8) -----------
/**
 * Words about the sender or a filter in a reply that also says the address is bad: "not allowed to
 * receive mails from you", "invalid address – Relay denied", "Account Unavailable: Possible
 * Forgery", "quarantined", an ESP's list ("previously reported as unknown", "manually
 * deactivated"). A reading that would suppress the address is a block instead.
 */
export const ABOUT_THE_SENDER =
  /from (?:you|this sender|your (?:domain|address|server|ip|host))\b|not allowed to receive|relay(?:ing)? (?:denied|not permitted)|forger(?:y|ed)|\bforged\b|quarantin|not subscribed|previously reported|manually deactivated|consistently bounced|backscatter|on a hold\b|content filter|\bspam\b|blacklist|block ?list|\bpolicy\b|reputation/i;
