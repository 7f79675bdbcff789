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
  return `(?:${start}(?:${a})${gapOf}(?:${b})|${start}(?:${b})${gapOf}(?:${a}))`;
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
  'user(?:name)?s?|mail ?box(?:es)?|mailbox|account|recipient|rcpt|address(?:ee)?|e-?mail|destinat\\w*|local[- ]?part|alias|benutzer|empf[aä]nger|postfach|adresse|destinataire|utilisateur|bo[iî]te|destinatario|usuario|buz[oó]n|casella|casilla|utente|gebruiker|ontvanger|odbiorc\\w*|adres\\w*|u[zż]ytkownik\\w*|kont[aoy]?|indirizzo|mottagar\\w*|e-?postadress\\w*|usu[aá]rio|destinat[aá]rio|nom du destinataire|пользовател\\w*|адрес\\w*|ящик\\w*|получател\\w*|адресат\\w*|учетн\\w+ запис\\w*';
const DOES_NOT_EXIST =
  "unknown|not (?:be )?(?:found|known|exist\\w*|valid|recogni[sz]ed|registered|present)|(?:does|do|did)(?:n't| not) exist|non-?existent|nonexist\\w*|no longer (?:exists?|valid|active|in use|available)|invalid|unrecogni[sz]ed|unregistered|deactivated|inactivated|inactive|deleted|removed|terminated|closed|unbekannt|existiert nicht|nicht (?:vorhanden|gefunden)|inconnue?|n'existe pas|inexistante?|introuvable|no existe|desconocido|inexistente|sconosciut[oa]|inesistente|non esiste|bestaat niet|onbekend|nie istnieje|nieznan\\w*|nie ma takiego|zablokowan\\w*|nieaktywn\\w*|inativ[oa]|inactiv[oa]|disattivat[oa]|desactiv\\w*|d[ée]sactiv[ée]e?|deaktiviert|expirad[oa]|ha expirado|bloccato per inutilizzo|non recens[ée]e?|n'est pas reconnu|pas reconnue?|non (?:sono )?riuscit[oa] a trovare|non trovat[oa]|hittades inte|inte (?:att )?hitta\\w*|no se (?:pudo )?encontr\\w*|não (?:foi )?encontrad[oa]|não existe|desconhecid[oa]|niet gevonden|nie znaleziono|не существует|неизвестн\\w*|не найден\\w*|не удалось найти|не зарегистрирован\\w*|заблокирован\\w*";
/** Scripts without spaces between words: the whole phrase. */
const GONE_PHRASES =
  '(?:该|此)?(?:用户|用戶|收件人|帐户|账户|帳號|邮箱|信箱)(?:名)?(?:不存在|未开通|未開通|已被?(?:注销|註銷|停用|冻结|凍結))|(?:ユーザ|宛先|アドレス|メールアドレス)\\S{0,8}(?:存在しません|見つかりません|ありません|不明)|ディレクトリのリストにありません|(?:사용자|수신자|계정)\\S{0,6}(?:없습니다|존재하지)';
/** What is said of someone other than the recipient: the sender, our client, its domain. */
const NOT_THE_RECIPIENT =
  /\bsender|\bfrom\b|mail from|return[- ]path|envelope from|\bhelo\b|\behlo\b|client|your (?:ip|host|server|address|domain)|reverse|\bptr\b|rdns|certificate|api ?key|password|credential|login|authenticat|(?<![@.-])\bdomain\b(?![.-])|(?<![@.-])\bhost\b(?![.-])|\bdns\b|\bmx\b/i;
export const RECIPIENT_GONE = anyOf(near(ADDRESS, DOES_NOT_EXIST, 5), GONE_PHRASES);

// ---- the mailbox is full ------------------------------------------------------------------
const MAILBOX =
  'mail ?box(?:es)?|mailbox|inbox|in-box|account(?:\\(s\\))?|postbox|mail ?folder|folder|storage|disk|space|quota|postfach|speicher\\w*|bo[iî]te|casilla|buz[oó]n|casella|brievenbus|skrzynk\\w*|ящик\\w*';
const FULL =
  'full|exceed\\w*|overflow\\w*|over (?:its |the |their )?(?:allowed |permitted )?(?:limit|quota|capacity|size)|insufficient|no (?:more )?(?:space|room)|not (?:have )?enough (?:space|room)|(?:limit|capacity|maximum) (?:reached|exceeded)|voll|[üu]berschritten|pleine?|satur[ée]e?|lleno|llena|piena|pieno|vol\\b|pełn\\w*|zapełnion\\w*|przepełnion\\w*|esaurit[oa]|cheia|cheio|fylld|переполнен\\w*|превышен\\w*|не хватает места|space not enough|(?:space|quota) (?:is )?(?:not enough|used up)';
/** Scripts without spaces between words: the whole phrase. */
const FULL_PHRASES =
  '(?:空间|空間|容量|邮箱|信箱)(?:已满|已滿|不足)|(?:メールボックス|容量)\\S{0,6}(?:一杯|満杯|いっぱい|超過|オーバー)|(?:용량|메일함)\\S{0,6}(?:초과|부족)';
/** "Quota" that is a sending limit, not a mailbox's (the phrase rows' exclusion too). */
export const SENDING_QUOTA =
  /queue quota|quota for sending|submission quota|send(?:ing)? quota|relay quota|with the same Message-ID|daily quota|hourly quota|throttling quota/i;
/** Besides a sending limit: a rate, a message too large for the server, two causes offered. */
export const NOT_A_FULL_MAILBOX = new RegExp(
  `${EITHER.source}|${SENDING_QUOTA.source}|\\bsend(?:ing)?\\b|\\brelay|submission|outgoing|outbound|per (?:second|minute|hour|day)|\\brate\\b|daily|monthly|message (?:size|too)|size of (?:the |this |your )?message|message (?:is )?larger|attachment|system storage|insufficient disk space|write error|transfer|queue quota|your account|recipients\\b.{0,20}\\b(?:limit|exceed)|recipient (?:limit|count)`,
  'i',
);
export const MAILBOX_OVER = anyOf(near(MAILBOX, FULL, 4), FULL_PHRASES);

// ---- sending too much, too fast -------------------------------------------------------------
const TOO =
  'too (?:many|much|fast|quickly|often|frequent\\w*|rapid\\w*)|excessive|exceed\\w* (?:the |our |your |a |its )?(?:\\w+ )?(?:rate|threshold|frequency)|rate[- ]?limit\\w*|frequency|zu viele|trop de|demasiad[oa]s|troppi|troppe|te veel|za dużo|слишком много';
const TRAFFIC =
  'mails?|e-?mails?|messages?|msgs?|recipients?|rcpts?|connections?|sessions?|requests?|deliver\\w*|sending|sends?|submissions?|transactions?|traffic|nachrichten|verbindungen|conexiones|mensajes|messaggi|connessioni|berichten|wiadomości|сообщени\\w*|писем';
/** "Too many" of things that are a sender's fault, not its volume. */
const NOT_VOLUME =
  /invalid|rejected|unknown|bad (?:recipients?|commands?)|errors?\b|hops|failed|failures|bounce|complaint|spam|reputation|\bspf\b|dkim|dmarc|authenticat|untrusted|new or|\btls\b|\bssl\b|size|length|load|received headers|loop|daily|per day|today|24 ?h|monthly|per month|this month/i;
export const TOO_MUCH_TRAFFIC = anyOf(near(TOO, TRAFFIC, 4));

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
  '(?:attachments?|file (?:types?|extensions?|names?)|executables?|(?:multi-?part )?mime (?:parts?|messages?))';
const NOT_ALLOWED =
  'not (?:allowed|permitted|accepted)|forbidden|prohibited|blocked|banned|dangerous|unsafe|rejected|refused|disallowed';
export const MESSAGE_UNFIT = anyOf(
  near(MESSAGE_PART, TOO_BIG, 4),
  near(MESSAGE_PART, MALFORMED, 4),
  near(FORBIDDEN_FILE, NOT_ALLOWED, 4),
  'virus|malware|trojan|infected|ransomware|viren|virenbefund',
);
/** A spam or phishing verdict names the message too: it is policy (decision order 5). */
const NOT_CONTENT = /spam|phish|junk|\bUBE\b|suspicious|reputation|blocked (?:by|using)|policy/i;

// ---- the receiver's own trouble ---------------------------------------------------------------
const SERVER = 'server|system|service(?! provider)|host|backend|database|storage|disk|queue|process\\w*|mta|smtp';
const TROUBLE =
  'error|failure|fault|problem|trouble|unavailable|not available|overloaded|maintenance|down\\b|busy|exception|crash\\w*|unreachable|timeout|timed out|not responding';
export const RECEIVER_TROUBLE = anyOf(near(SERVER, TROUBLE, 3));
/** Trouble that is someone's verdict or check, not the receiver's system. */
const NOT_SYSTEM =
  /spam|unwanted|unsolicited|abuse|policy|blocked|denied|reject|reputation|\bspf\b|dkim|dmarc|authenticat|user unknown|no such|not found|does not exist|invalid|syntax|certificate|tls|ssl/i;

/** The recipient reading's exclusions: someone else named, a protocol parameter, a verdict, a deferral, two causes. */
const NOT_RECIPIENT_GONE = new RegExp(
  `${NOT_THE_RECIPIENT.source}|parameters? not recognized|not implemented|policy|denied|blocked|refused|temporar|try again|later|${EITHER.source}`,
  'i',
);

export { NOT_RECIPIENT_GONE, NOT_VOLUME, NOT_CONTENT, NOT_SYSTEM };
