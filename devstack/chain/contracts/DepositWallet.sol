// SPDX-License-Identifier: MIT
// Polymarket's deposit wallet (signature type 3) for the local chain: a beacon-proxy clone
// per owner, made by DepositWalletFactory at the address the official SDKs derive
// (ACCOUNTS.md 2.2). The owner, or a session signer it authorized, signs EIP-712 `Batch`es
// that anyone (the relayer) submits through execute(); orders are signed ERC-7739 style and
// checked by isValidSignature (ERC-1271). Pause/opt-out and the timelock are left out.
pragma solidity ^0.8.24;

contract DepositWallet {
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    struct Batch {
        address wallet;
        uint256 nonce;
        uint256 deadline;
        Call[] calls;
    }

    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _NAME_HASH = keccak256("DepositWallet");
    bytes32 private constant _VERSION_HASH = keccak256("1");
    bytes32 private constant _CALL_TYPEHASH = keccak256("Call(address target,uint256 value,bytes data)");
    bytes32 private constant _BATCH_TYPEHASH = keccak256(
        "Batch(address wallet,uint256 nonce,uint256 deadline,Call[] calls)Call(address target,uint256 value,bytes data)"
    );
    // the session-signer envelope ends with this word (ts-sdk wrapDepositWalletSessionSignerSignature)
    bytes32 private constant _SESSION_MAGIC = 0x6492649264926492649264926492649264926492649264926492649264926492;
    bytes4 private constant _ERC1271_MAGIC = 0x1626ba7e;
    // LibClone's ERC1967BeaconProxy runtime is 0x52 bytes; the immutable args follow it
    uint256 private constant _ARGS_OFFSET = 0x52;

    uint256 public nonce;
    mapping(address => uint256) public sessionSignerValidUntil;

    event BatchExecuted(uint256 indexed nonce, address indexed signer);
    event SessionSignerAuthorized(address indexed signer, uint256 validUntil);
    event SessionSignerRevoked(address indexed signer);

    // ---- identity, from the clone's immutable args abi.encode(factory, walletId) ----------

    function factory() public view returns (address) {
        return address(uint160(uint256(_arg(0))));
    }

    function walletId() public view returns (bytes32) {
        return _arg(32);
    }

    /// walletId is the owner's address left-padded to 32 bytes.
    function owner() public view returns (address) {
        return address(uint160(uint256(_arg(32))));
    }

    function _arg(uint256 offset) private view returns (bytes32 word) {
        // exactly a clone's runtime: the implementation itself has no owner and runs nothing
        require(address(this).code.length == _ARGS_OFFSET + 64, "DepositWallet: not a clone");
        assembly {
            extcodecopy(address(), 0x00, add(_ARGS_OFFSET, offset), 0x20)
            word := mload(0x00)
        }
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _NAME_HASH, _VERSION_HASH, block.chainid, address(this)));
    }

    // ---- batches ---------------------------------------------------------------------------

    function hashBatch(Batch calldata batch) public view returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](batch.calls.length);
        for (uint256 i = 0; i < batch.calls.length; i++) {
            Call calldata c = batch.calls[i];
            callHashes[i] = keccak256(abi.encode(_CALL_TYPEHASH, c.target, c.value, keccak256(c.data)));
        }
        bytes32 structHash = keccak256(
            abi.encode(
                _BATCH_TYPEHASH, batch.wallet, batch.nonce, batch.deadline, keccak256(abi.encodePacked(callHashes))
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    /// Run a batch signed by the owner or (with the session envelope) an active session signer.
    function execute(Batch calldata batch, bytes calldata signature) external payable {
        require(batch.wallet == address(this), "DepositWallet: wrong wallet");
        require(batch.nonce == nonce, "DepositWallet: invalid nonce");
        require(block.timestamp <= batch.deadline, "DepositWallet: expired deadline");
        (address signer, bytes calldata sig) = _splitEnvelope(signature);
        require(_signedBy(hashBatch(batch), sig, signer), "DepositWallet: invalid signature");
        if (signer != owner()) {
            // a session key trades; it may not manage the wallet's own keys
            for (uint256 i = 0; i < batch.calls.length; i++) {
                require(batch.calls[i].target != address(this), "DepositWallet: owner only");
            }
        }
        nonce = batch.nonce + 1;
        for (uint256 i = 0; i < batch.calls.length; i++) {
            Call calldata c = batch.calls[i];
            (bool ok, bytes memory result) = c.target.call{value: c.value}(c.data);
            if (!ok) {
                assembly {
                    revert(add(result, 0x20), mload(result))
                }
            }
        }
        emit BatchExecuted(batch.nonce, signer);
    }

    // ---- session signers (called through execute, or by the owner directly) -----------------

    modifier onlySelfOrOwner() {
        require(msg.sender == address(this) || msg.sender == owner(), "DepositWallet: not authorized");
        _;
    }

    function authorizeSessionSigner(address signer, uint256 validUntil) external onlySelfOrOwner {
        require(signer != address(0) && signer != owner(), "DepositWallet: invalid session signer");
        require(validUntil > block.timestamp, "DepositWallet: validUntil in the past");
        sessionSignerValidUntil[signer] = validUntil;
        emit SessionSignerAuthorized(signer, validUntil);
    }

    function revokeSessionSigner(address signer) external onlySelfOrOwner {
        delete sessionSignerValidUntil[signer];
        emit SessionSignerRevoked(signer);
    }

    function isSessionSigner(address signer) public view returns (bool) {
        return sessionSignerValidUntil[signer] > block.timestamp;
    }

    // ---- ERC-1271 with ERC-7739 nested typed data -------------------------------------------

    /// Accept `hash` = the app's EIP-712 digest when `signature` is
    /// innerSig || appDomainSeparator || contentsHash || contentsType || uint16(len(contentsType)),
    /// innerSig signing TypedDataSign{contents, this wallet's domain fields} under the app domain.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, bytes calldata sig) = _splitEnvelope(signature);
        (bool wellFormed, bytes32 digest, uint256 innerLength) = _nestedDigest(hash, sig);
        if (!wellFormed) return 0xffffffff;
        return _signedBy(digest, sig[:innerLength], signer) ? _ERC1271_MAGIC : bytes4(0xffffffff);
    }

    /// The digest innerSig must sign, and innerSig's length; not well formed if the trailer is
    /// short or does not rebuild `hash`.
    function _nestedDigest(bytes32 hash, bytes calldata sig)
        private
        view
        returns (bool wellFormed, bytes32 digest, uint256 innerLength)
    {
        if (sig.length < 65 + 66) return (false, 0, 0);
        uint256 typeLength = uint16(bytes2(sig[sig.length - 2:]));
        if (sig.length < 65 + 66 + typeLength) return (false, 0, 0);
        uint256 typeStart = sig.length - 2 - typeLength;
        bytes32 contents = bytes32(sig[typeStart - 32:typeStart]);
        bytes32 appDomain = bytes32(sig[typeStart - 64:typeStart - 32]);
        if (keccak256(abi.encodePacked("\x19\x01", appDomain, contents)) != hash) return (false, 0, 0);
        bytes32 structHash = keccak256(
            abi.encode(
                _typedDataSignTypehash(sig[typeStart:sig.length - 2]),
                contents,
                _NAME_HASH,
                _VERSION_HASH,
                block.chainid,
                address(this),
                bytes32(0)
            )
        );
        return (true, keccak256(abi.encodePacked("\x19\x01", appDomain, structHash)), typeStart - 64);
    }

    function _typedDataSignTypehash(bytes calldata contentsType) private pure returns (bytes32) {
        uint256 nameLength = 0;
        while (nameLength < contentsType.length && contentsType[nameLength] != "(") nameLength++;
        return keccak256(
            abi.encodePacked(
                "TypedDataSign(",
                contentsType[:nameLength],
                " contents,string name,string version,uint256 chainId,address verifyingContract,bytes32 salt)",
                contentsType
            )
        );
    }

    // ---- signatures ---------------------------------------------------------------------

    /// The expected signer and its signature: an active session signer out of the envelope
    /// abi.encode(bytes32(signer), bytes32(0), bytes sig) || magic, else the owner.
    function _splitEnvelope(bytes calldata signature) private view returns (address, bytes calldata) {
        if (signature.length < 160 || bytes32(signature[signature.length - 32:]) != _SESSION_MAGIC) {
            return (owner(), signature);
        }
        address signer = address(uint160(uint256(bytes32(signature[0:32]))));
        uint256 offset = uint256(bytes32(signature[64:96]));
        uint256 length = uint256(bytes32(signature[offset:offset + 32]));
        bytes calldata inner = signature[offset + 32:offset + 32 + length];
        // an unauthorized or expired key signs as nobody
        return (isSessionSigner(signer) ? signer : address(0), inner);
    }

    /// Whether `sig` is a plain 65-byte ECDSA signature of `digest` by `signer` (never by nobody).
    function _signedBy(bytes32 digest, bytes calldata sig, address signer) private pure returns (bool) {
        if (signer == address(0) || sig.length != 65) return false;
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        uint8 v = uint8(sig[64]);
        // reject malleable (high-s) signatures, as OpenZeppelin's and Solady's ECDSA do
        if (uint256(s) > 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) return false;
        return ecrecover(digest, v, r, s) == signer;
    }

    // ---- receiving tokens and POL ------------------------------------------------------

    receive() external payable {}

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        pure
        returns (bytes4)
    {
        return this.onERC1155BatchReceived.selector;
    }
}
